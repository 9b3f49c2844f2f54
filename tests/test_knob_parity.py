"""topk.json, repetition.json and batch.json equal what MiniMind's own generate gives with the same
arguments, in both backends, on a dense, a MoE, a LoRA'd, a YaRN and a course-shaped model with
MiniMind's tokenizer (tests/knob_models.py); a twin whose penalty skips the prompt's tokens, or
that ignores the mask, fails the same comparison. Skipped without MiniMind's source or its
tokenizer fixture."""

from __future__ import annotations

import pytest
from knob_models import KINDS, models_of_kind
from reportdata import RUN

from mminfer.measures.batch.measure import measure_batch
from mminfer.measures.repetition.measure import (
    RepetitionSettings,
    greedy_with_penalty,
    measure_repetition,
)
from mminfer.measures.topk.measure import TopKSettings, measure_topk
from mminfer.model import twin as builtin_model
from mminfer.model.draws import Draws, Prompted
from mminfer.model.prompts import chat_prompt
from mminfer.model.tokenizer import load_tokenizer
from mminfer.records import ChatPrompt, PretrainPrompt, RunInfo, from_json, to_json, within_rounding
from mminfer.timing.ab import Rounds

QUESTION = "가람 마을의 특산물은 무엇인가요?"
TEXT = (
    "가람 마을은 강가에 있는 작은 마을이다. 마을 사람들은 아침마다 시장에 나가 채소와 생선을 "
    "판다. 민수는 학교가 끝나면 할머니의 가게를 돕는다. 여름이면 강에서 배를 타는 사람이 많다."
)


def run_of(dtype: str = "float32") -> RunInfo:
    return from_json(RunInfo, RUN | {"dtype": dtype})  # the records' runs are left out


@pytest.fixture(scope="module")
def tokenizer(shared_fixtures):
    return load_tokenizer(shared_fixtures)


@pytest.fixture(scope="module", params=list(KINDS))
def kind(request, minimind_src, tmp_path_factory):
    return models_of_kind(request.param, minimind_src, tmp_path_factory.mktemp(request.param))


def without(record, *keys) -> dict:
    data = to_json(record)
    for key in keys:
        data.pop(key)
    return data


def topk_of(sft, pretrain, tokenizer):
    prompt_ids, template = chat_prompt(tokenizer, QUESTION)
    prompt = ChatPrompt("minimind", template, QUESTION, len(prompt_ids), 0)
    return measure_topk(
        sft=Prompted(sft, tokenizer, prompt_ids, prompt, "cpu", run_of()),
        pretrain_model=pretrain,
        topp_run=run_of(),
        draws=Draws(samples=12, new_tokens=10, seed=0),
        settings=TopKSettings(QUESTION, False, [0.3, 1.0, 1.5], 50, "민수는", [0.5, 0.9, 0.99]),
    )


def greedy_prompt_of(tokenizer) -> list[int]:
    return [tokenizer.bos_token_id] + tokenizer.encode(TEXT)[:40]


def repetition_of(sft, pretrain, tokenizer, penalties=(1.0, 1.1, 1.3), greedy_ids=None):
    prompt_ids, template = chat_prompt(tokenizer, QUESTION)
    prompt = ChatPrompt("minimind", template, QUESTION, len(prompt_ids), 0)
    greedy_ids = greedy_ids or greedy_prompt_of(tokenizer)
    greedy_prompt = PretrainPrompt("minimind", "text", 1, len(greedy_ids) - 1)
    return measure_repetition(
        sft=Prompted(sft, tokenizer, prompt_ids, prompt, "cpu", run_of()),
        greedy=Prompted(pretrain, tokenizer, greedy_ids, greedy_prompt, "cpu", run_of()),
        settings=RepetitionSettings(QUESTION, False, 1.0, list(penalties), greedy_new_tokens=24),
        draws=Draws(samples=12, new_tokens=10, seed=0),
        rounds=Rounds(warmup=0, runs=1, max_runs=1),
    )


def batch_prompts_of(tokenizer) -> list[list[int]]:
    ids = tokenizer.encode(TEXT)
    first = [tokenizer.bos_token_id] + ids[:48]
    return [first] + [[tokenizer.bos_token_id] + ids[48 : 48 + n] for n in (6, 17, 30)]


def batch_of(model, tokenizer, dtype="float32"):
    prompt = PretrainPrompt("minimind", "text", 1, 48)
    return measure_batch(
        model=model,
        tokenizer=tokenizer,
        prompts=batch_prompts_of(tokenizer),
        new_tokens=16,
        rounds=Rounds(warmup=0, runs=1, max_runs=1),
        device="cpu",
        prompt=prompt,
        run=run_of(dtype),
    )


def test_topk_json_equals_minimind_in_both_backends(kind, tokenizer):
    reference, backends = kind
    expected = without(topk_of(reference, reference, tokenizer), "run", "topp_run")
    for model in backends:
        assert without(topk_of(model, model, tokenizer), "run", "topp_run") == expected


def test_repetition_json_equals_minimind_in_both_backends(kind, tokenizer):
    reference, backends = kind
    keys = ("run", "greedy_run", "timing")
    expected = without(repetition_of(reference, reference, tokenizer), *keys)
    for model in backends:
        assert without(repetition_of(model, model, tokenizer), *keys) == expected


def test_batch_json_equals_minimind_in_both_backends(kind, tokenizer):
    reference, backends = kind
    expected = without(batch_of(reference, tokenizer), "run", "timing")
    for model in backends:
        assert without(batch_of(model, tokenizer), "run", "timing") == expected


def test_every_masked_row_is_the_prompt_alone_or_parts_within_rounding(kind, tokenizer):
    """The acceptance's rule on random weights: the same ids, or a first divergence where the two
    paths' logits were within ROUNDING_TOLERANCE; anything else fails."""
    reference, _ = kind
    for row in batch_of(reference, tokenizer).rows:
        assert row.finite
        assert row.same_ids or within_rounding(row.max_logit_diff, row.max_abs_logit, "float32")


def test_without_the_mask_every_padded_row_moves_past_rounding(kind, tokenizer):
    """Random weights pick almost the same token after any context, so the ids may survive the
    pads; the logits do not: without the mask each padded row's gap is past ROUNDING_TOLERANCE,
    the row without a pad stays within it, and right padding changes the ids of a short row."""
    reference, _ = kind
    record = batch_of(reference, tokenizer)
    for row in record.no_mask.rows:
        within = within_rounding(row.max_logit_diff, row.max_abs_logit, "float32")
        assert within == (row.pad == 0), row
    assert record.right_padding.changed > 0


@pytest.fixture(scope="module")
def dense(minimind_src, tmp_path_factory):
    return models_of_kind("dense", minimind_src, tmp_path_factory.mktemp("dense-twin"))


def test_a_twin_whose_penalty_skips_the_prompt_fails_the_comparison(dense, tokenizer, monkeypatch):
    """A greedy prompt that holds plain greedy's own next token: MiniMind's penalty sees it in the
    prompt from the first step, a twin that penalizes only the generated tokens does not."""
    reference, (builtin, _) = dense
    plain = greedy_with_penalty(reference, greedy_prompt_of(tokenizer), 1.0, 1, "cpu")
    greedy_ids = greedy_prompt_of(tokenizer) + plain
    keys = ("run", "greedy_run", "timing")
    args = (tokenizer, (1.0, 5.0), greedy_ids)
    expected = without(repetition_of(reference, reference, *args), *keys)
    assert without(repetition_of(builtin, builtin, *args), *keys) == expected
    penalize = builtin_model.apply_repetition_penalty
    prompt_lens = {len(chat_prompt(tokenizer, QUESTION)[0]), len(greedy_ids)}

    def generated_only(logits, input_ids, penalty):
        prompt_len = max(length for length in prompt_lens if length <= input_ids.shape[1])
        penalize(logits, input_ids[:, prompt_len:], penalty)

    monkeypatch.setattr(builtin_model, "apply_repetition_penalty", generated_only)
    skipped = without(repetition_of(builtin, builtin, *args), *keys)
    assert skipped["penalties"]["5.0"]["greedy_ids"] != expected["penalties"]["5.0"]["greedy_ids"]


def test_a_twin_that_ignores_the_mask_fails_the_comparison(dense, tokenizer, monkeypatch):
    reference, (builtin, _) = dense
    expected = without(batch_of(reference, tokenizer), "run", "timing")
    original = builtin.forward

    def maskless(input_ids, attention_mask=None, *args, **kwargs):
        return original(input_ids, None, *args, **kwargs)

    monkeypatch.setattr(builtin, "forward", maskless)
    assert without(batch_of(builtin, tokenizer), "run", "timing") != expected


def test_a_float16_batch_reports_the_pitfall_not_a_crash(dense, tokenizer):
    reference, _ = dense
    model = reference.half()
    try:
        record = batch_of(model, tokenizer, "float16")
    finally:
        reference.float()
    pitfall = record.half_precision
    assert pitfall.dtype == "float16" and not pitfall.mask_fits and pitfall.mask_value is None
    assert pitfall.rows_not_finite == pitfall.padded_rows == 3
    assert record.rows[0].finite and record.rows[0].same_ids  # the row without a pad
    assert all(row.max_logit_diff is None for row in record.rows[1:])
