"""Prompt lookup (mminfer/model/lookup.py): the cached generate's greedy ids in fewer calls, a call
saved per guess kept, and a cache cut back to what a fresh prefill of the kept tokens holds."""

from __future__ import annotations

import pytest
import torch
from knob_models import models_of_kind
from shapes import GREEDY, prompt_of, small_config
from test_remedies import RUN, builtin_of

from mminfer.measures.lookup.decide import counts_hold, faster_of, ids_of
from mminfer.measures.lookup.measure import Case, LookupSettings, check_case, measure_lookup
from mminfer.model.cachebytes import cache_tensor_bytes
from mminfer.model.lookup import cut_cache, lookup_generate, propose
from mminfer.model.twin import MiniMindForCausalLM

CPU = torch.device("cpu")


def cached_ids(model, prompt: list[int], new_tokens: int) -> list[int]:
    out = model.generate(
        torch.tensor([prompt]), max_new_tokens=new_tokens, use_cache=True, **GREEDY
    )
    return out[0, len(prompt) :].tolist()


def test_a_guess_follows_the_most_recent_earlier_occurrence():
    assert propose([1, 2, 3, 1, 2, 4, 1, 2], ngram=2, limit=3) == [4, 1, 2]
    assert propose([5, 6, 7], ngram=2, limit=3) == [] and propose([1, 1], 1, 0) == []
    assert propose([9, 7, 7, 7], ngram=2, limit=4) == [7, 7, 7, 7]  # a loop's copy goes on


@pytest.mark.parametrize("kind,lora", [("dense", False), ("moe", False), ("yarn", False)])
def test_guesses_always_wrong_give_the_same_ids_in_n_calls(kind, lora):
    model, prompt = builtin_of(kind, lora), prompt_of(9)
    reference = cached_ids(model, prompt, 12)

    def wrong(ids, ngram, limit):  # each guess one past the token the model picks next
        return [(reference[len(ids) - len(prompt)] + 1) % 64] * limit

    run = lookup_generate(model, prompt, 12, guesses=3, ngram=2, device=CPU, proposer=wrong)
    assert run.ids == reference and run.calls == 12 and run.accepted == 0
    assert run.fed == len(prompt) + 11 + run.proposed  # P + N - 1, and every guess checked


def test_text_the_model_repeats_costs_fewer_calls_in_line_with_the_guesses_kept():
    torch.manual_seed(0)  # narrow weights, as initialised: greedy soon repeats itself
    model = MiniMindForCausalLM(small_config(positions=128)).eval()
    prompt = prompt_of(9)
    run = lookup_generate(model, prompt, 24, guesses=4, ngram=2, device=CPU)
    assert run.ids == cached_ids(model, prompt, 24)
    assert run.accepted > 0 and run.calls == 24 - run.accepted  # each guess kept, a call saved
    assert sum(run.accepted_per_call) == run.accepted and run.fed == len(prompt) + 23 + (
        run.proposed - run.accepted
    )


def test_a_cut_cache_equals_a_fresh_prefill_of_the_kept_tokens():
    model, prompt = builtin_of("dense"), prompt_of(9)
    with torch.inference_mode():
        longer = model(torch.tensor([prompt + [3, 4, 5]]), use_cache=True).past_key_values
        fresh = model(torch.tensor([prompt + [3]]), use_cache=True).past_key_values
    cut = cut_cache(longer, len(prompt) + 1)
    for (k, v), (k0, v0) in zip(cut, fresh):
        assert torch.allclose(k, k0, atol=1e-5) and torch.allclose(v, v0, atol=1e-5)
    key = cut[0][0]  # a copy: the cut positions are freed
    assert cache_tensor_bytes(cut) == cache_tensor_bytes(fresh)
    assert key.untyped_storage().size() == key.numel() * key.element_size()


@pytest.mark.parametrize("kind", ["dense", "moe", "lora", "yarn", "course", "untied", "minimind-3"])
def test_the_cached_generate_ids_in_both_backends_or_a_near_tie(kind, minimind_src, tmp_path):
    reference, backends = models_of_kind(kind, minimind_src, tmp_path)
    for model in (reference, *backends):
        case = Case("validation", model, prompt_of(9) * 2, CPU, run=None)
        checked = check_case(case, 12, LookupSettings(ngram=2, guesses=(2, 4)))
        assert checked.reference == cached_ids(model, case.prompt_ids, 12), kind
        assert all(ids_of(g) in ("same", "near_tie") for g in checked.by_guesses), kind


def test_the_record_counts_against_the_formulas_and_times_every_k(tiny_model, tiny_run):
    validation = Case("validation", tiny_model, prompt_of(8) * 2, CPU, tiny_run)
    cases = [validation, Case("chat", tiny_model, prompt_of(5), CPU, tiny_run)]
    settings = LookupSettings(ngram=2, guesses=(1, 3))
    record = measure_lookup(cases=cases, new_tokens=6, rounds=RUN, settings=settings)
    assert list(record.cases) == ["validation", "chat"]
    for case in record.cases.values():
        assert counts_hold(case) and case.calls_cached == 6
        assert all(g.same_ids and len(g.lookup_runs_s) == 2 for g in case.by_guesses)
        assert all(g.faster == faster_of(g) and g.speedup > 0 for g in case.by_guesses)
    assert [g.wide.width for g in record.cases["validation"].by_guesses] == [2, 4]
    assert all(g.wide is None for g in record.cases["chat"].by_guesses)
