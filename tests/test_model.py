"""The builtin model's generate, its top-k / top-p filters, and (when MiniMind's source is present)
bit-for-bit agreement between the ``builtin`` and ``minimind`` backends.

The reference loops below are written from the task's description of MiniMind's generate: each step
feeds ``input_ids[:, past_len:]`` (everything without a cache), takes the last position's logits,
divides by the temperature, and picks by argmax or ``torch.multinomial(softmax(logits), 1)``.
"""

from __future__ import annotations

import pytest
import torch
from shapes import GREEDY, UNFILTERED

from mminfer.model.twin import keep_top_k, keep_top_p, top_p_mask

PROMPT = [1, 45, 120, 7, 300, 88, 19, 250, 64, 9]


def prompt_tensor(ids=PROMPT) -> torch.Tensor:
    return torch.tensor([ids], dtype=torch.long)


@torch.no_grad()
def manual_loop(model, ids: torch.Tensor, new_tokens: int, pick, use_cache: bool) -> torch.Tensor:
    past = None
    for _ in range(new_tokens):
        past_len = past[0][0].shape[1] if past else 0  # no cache: the whole sequence, every step
        out = model(ids[:, past_len:], past_key_values=past, use_cache=use_cache)
        ids = torch.cat([ids, pick(out.logits[:, -1, :])], dim=-1)
        past = out.past_key_values if use_cache else None
    return ids


def argmax(logits: torch.Tensor) -> torch.Tensor:
    return logits.argmax(dim=-1, keepdim=True)


def reference_top_p_mask(logits: torch.Tensor, top_p: float) -> torch.Tensor:
    """A literal transcription of the rule in MiniMind's generate (model_minimind.py):
    sort descending, mask where the cumulative softmax exceeds p, shift the mask one slot right,
    never mask slot 0, scatter back to vocabulary order."""
    sorted_logits, sorted_indices = torch.sort(logits, descending=True)
    mask = torch.cumsum(torch.softmax(sorted_logits, dim=-1), dim=-1) > top_p
    mask[..., 1:], mask[..., 0] = mask[..., :-1].clone(), 0
    return mask.scatter(1, sorted_indices, mask)


def survivors(probs: list[float], p: float) -> int:
    logits = torch.tensor([probs], dtype=torch.float64).log()
    return int((~top_p_mask(logits, p)).sum())


# --- generate against hand-written loops ----------------------------------------------------------


@pytest.mark.parametrize("use_cache", [False, True])
def test_greedy_generate_equals_the_manual_loop(tiny_model, use_cache):
    out = tiny_model.generate(prompt_tensor(), max_new_tokens=12, use_cache=use_cache, **GREEDY)
    assert torch.equal(out, manual_loop(tiny_model, prompt_tensor(), 12, argmax, use_cache))


def test_generate_returns_prompt_followed_by_new_tokens(tiny_model):
    out = tiny_model.generate(prompt_tensor(), max_new_tokens=5, **GREEDY)
    assert out.shape == (1, len(PROMPT) + 5)
    assert out[0, : len(PROMPT)].tolist() == PROMPT


def multinomial(logits: torch.Tensor) -> torch.Tensor:
    return torch.multinomial(torch.softmax(logits / 0.7, dim=-1), num_samples=1)


@pytest.mark.parametrize("use_cache", [True, False])
def test_seeded_sampling_equals_manual_multinomial_loop(tiny_model, use_cache):
    sampling = UNFILTERED | {"do_sample": True, "temperature": 0.7, "num_return_sequences": 4}
    torch.manual_seed(123)
    out = tiny_model.generate(prompt_tensor(), max_new_tokens=8, use_cache=use_cache, **sampling)
    torch.manual_seed(123)
    expected = manual_loop(tiny_model, prompt_tensor().repeat(4, 1), 8, multinomial, use_cache)
    assert torch.equal(out, expected)
    assert len({tuple(row) for row in out[:, len(PROMPT) :].tolist()}) > 1  # really sampled


def test_generate_stops_when_every_row_has_emitted_eos(tiny_model):
    first = tiny_model.generate(prompt_tensor(), max_new_tokens=1, **GREEDY)[0, -1].item()
    out = tiny_model.generate(
        prompt_tensor(), max_new_tokens=10, **GREEDY | {"eos_token_id": first}
    )
    assert out[0, len(PROMPT) :].tolist() == [first]


def test_finished_rows_are_padded_with_eos(tiny_model):
    # Sample 6 rows for 10 tokens; take eos = a token some row emits early, then every row that
    # emitted it must continue with eos only.
    sampling = {"max_new_tokens": 10, "do_sample": True, "top_k": 0, "top_p": 1.0}
    sampling |= {"temperature": 1.0, "num_return_sequences": 6}
    torch.manual_seed(5)
    free = tiny_model.generate(prompt_tensor(), eos_token_id=None, **sampling)
    eos = free[0, len(PROMPT)].item()
    torch.manual_seed(5)
    out = tiny_model.generate(prompt_tensor(), eos_token_id=eos, **sampling)
    new = out[:, len(PROMPT) :].tolist()
    assert new[0] == [eos] * len(new[0])
    for row in new:
        if eos in row:
            assert all(token == eos for token in row[row.index(eos) :])


# --- top-k ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "logits, k, kept",
    [
        ([3.0, 2.0, 2.0, 1.0, 0.5], 2, [True, True, True, False, False]),  # ties with the kth kept
        ([0.1, 4.0, -1.0, 2.5, 3.0], 3, [False, True, False, True, True]),  # without: exactly k
    ],
)
def test_keep_top_k_keeps_the_k_largest_and_their_ties(logits, k, kept):
    logits = torch.tensor([logits])
    filtered = keep_top_k(logits.clone(), k)
    assert torch.isfinite(filtered).tolist() == [kept]
    assert torch.equal(filtered[0, kept], logits[0, kept])


# --- top-p ----------------------------------------------------------------------------------------


# The mask: cumsum > p, shifted one slot right, slot 0 never masked.
@pytest.mark.parametrize(
    "probs, p, kept",
    [
        ([0.5, 0.3, 0.2], 0.4, 1),  # cumsum [0.5, 0.8, 1.0] > p everywhere; the top always kept
        ([0.5, 0.3, 0.2], 0.6, 2),  # [F, T, T] -> [F, F, T]: 0.3 crosses 0.6 and stays
        ([0.5, 0.3, 0.2], 0.85, 3),  # [F, F, T] -> [F, F, F]
        ([0.9, 0.05, 0.03, 0.01, 0.005, 0.005], 0.985, 4),  # near one still cuts a long tail
        ([0.9, 0.05, 0.03, 0.01, 0.005, 0.005], 0.999, 6),  # only the 1.0 exceeds: none removed
    ],
)
def test_top_p_keeps_the_tokens_up_to_the_one_that_first_crosses_p(probs, p, kept):
    assert survivors(probs, p) == kept


def test_top_p_works_in_sorted_order_not_vocabulary_order():
    # the same probabilities shuffled: [0.2, 0.5, 0.3]; p=0.6 keeps 0.5 (id 1) and 0.3 (id 2)
    logits = torch.tensor([[0.2, 0.5, 0.3]], dtype=torch.float64).log()
    assert (~top_p_mask(logits, 0.6)).tolist() == [[False, True, True]]


def test_top_p_tie_at_the_boundary_keeps_only_one_of_the_tied_tokens():
    # logits [2, 1, 1, 0]: probs ~ [0.534, 0.197, 0.197, 0.072], cumsum ~ [0.534, 0.731, 0.928, 1.0]
    # p=0.6: > p -> [F, T, T, T]; shift -> [F, F, T, T] -> 2 survivors: the top and ONE of the two
    # equal logits (unlike top-k, MiniMind's top-p splits a tie by sort position)
    logits = torch.tensor([[2.0, 1.0, 1.0, 0.0]])
    kept = (~top_p_mask(logits.clone(), 0.6))[0].tolist()
    assert kept[0] is True and kept[3] is False
    assert kept[1] + kept[2] == 1
    assert torch.equal(top_p_mask(logits.clone(), 0.6), reference_top_p_mask(logits.clone(), 0.6))


@pytest.mark.parametrize("p", [0.05, 0.3, 0.5, 0.9, 0.99, 0.999])
def test_top_p_mask_equals_minimind_rule_on_random_logits(p):
    generator = torch.Generator().manual_seed(7)
    logits = torch.randn(5, 300, generator=generator) * 3
    logits[0, 10] = logits[0, 11] = logits[0].max() + 0.5  # a tie at the top of row 0
    assert torch.equal(top_p_mask(logits.clone(), p), reference_top_p_mask(logits.clone(), p))


def test_keep_top_p_sets_removed_logits_to_minus_infinity():
    logits = torch.tensor([[0.5, 0.3, 0.2]]).log()
    kept = keep_top_p(logits.clone(), 0.6)
    assert kept[0, 2].item() == float("-inf")
    assert torch.equal(kept[0, :2], logits[0, :2])


# --- builtin vs MiniMind's own model (optional) ---------------------------------------------------


@pytest.fixture(scope="module")
def both_backends(load_tiny, minimind_src):
    builtin = load_tiny(backend="builtin")
    minimind = load_tiny(backend="minimind", minimind_src=minimind_src)
    assert minimind.backend == "minimind"
    assert type(minimind.model).__module__ != type(builtin.model).__module__
    return builtin.model, minimind.model


def test_minimind_and_builtin_give_identical_logits_and_cache(both_backends):
    builtin, minimind = both_backends
    with torch.no_grad():
        a = builtin(prompt_tensor(), use_cache=True)
        b = minimind(prompt_tensor(), use_cache=True)
        assert torch.equal(a.logits, b.logits)
        assert len(a.past_key_values) == len(b.past_key_values)
        for (ka, va), (kb, vb) in zip(a.past_key_values, b.past_key_values):
            assert torch.equal(ka, kb) and torch.equal(va, vb)
        step = torch.tensor([[77]])
        a2 = builtin(step, past_key_values=a.past_key_values, use_cache=True)
        b2 = minimind(step, past_key_values=b.past_key_values, use_cache=True)
        assert torch.equal(a2.logits, b2.logits)


@pytest.mark.parametrize("use_cache", [True, False])
def test_minimind_and_builtin_greedy_ids_are_identical(both_backends, use_cache):
    builtin, minimind = both_backends
    kwargs = GREEDY | {"max_new_tokens": 16, "use_cache": use_cache}
    ours, theirs = (model.generate(prompt_tensor(), **kwargs) for model in (builtin, minimind))
    assert torch.equal(ours, theirs)


def test_minimind_and_builtin_seeded_sampling_is_identical(both_backends):
    builtin, minimind = both_backends
    kwargs = {"max_new_tokens": 10, "do_sample": True, "top_k": 20, "top_p": 0.9}
    kwargs |= {"temperature": 1.2, "eos_token_id": 2, "num_return_sequences": 5}
    torch.manual_seed(3)
    a = builtin.generate(prompt_tensor(), **kwargs)
    torch.manual_seed(3)
    b = minimind.generate(prompt_tensor(), **kwargs)
    assert torch.equal(a, b)


def test_minimind_and_builtin_agree_with_a_padding_mask(both_backends):
    builtin, minimind = both_backends
    ids = torch.tensor([[0, 0, 1, 45, 120], [1, 7, 300, 88, 19]])
    mask = torch.tensor([[0, 0, 1, 1, 1], [1, 1, 1, 1, 1]])
    with torch.no_grad():
        ours, theirs = (model(ids, attention_mask=mask).logits for model in (builtin, minimind))
    assert torch.equal(ours, theirs)


def test_minimind_and_builtin_agree_in_bfloat16(load_tiny, minimind_src):
    builtin = load_tiny(dtype="bfloat16").model
    minimind = load_tiny(backend="minimind", minimind_src=minimind_src, dtype="bfloat16").model
    with torch.no_grad():
        a = builtin(prompt_tensor(), use_cache=True)
        b = minimind(prompt_tensor(), use_cache=True)
    assert a.logits.dtype == torch.bfloat16
    assert torch.equal(a.logits, b.logits)
    assert torch.equal(a.past_key_values[-1][0], b.past_key_values[-1][0])
