"""What one machine serves (mminfer.serve): the batch fit, where batching stops being nearly free,
users by speed and by memory and the bound that binds, on hand-made steps (a fake clock); then one
real decode of the tiny model."""

from __future__ import annotations

import pytest
from shapes import GREEDY, prompt_of, serve_settings, small_config

from mminfer.kvcache import kv_formula_bytes
from mminfer.records import BatchStep
from mminfer.serve import fit_batches, nearly_free_up_to, serve, users_bound, users_by_speed

PROMPT = prompt_of(21)


def steps_of(seconds_by_batch: dict[int, float]) -> list[BatchStep]:
    """BatchStep rows whose decode step takes the given seconds (a machine with a known clock)."""
    rows = []
    for batch, seconds in seconds_by_batch.items():
        row = BatchStep(
            batch=batch,
            prefill_s=seconds * 10,
            decode_step_s=seconds,
            decode_steps_s=[seconds] * 4,
            tokens_per_second=batch / seconds,
            per_user_tokens_per_second=1 / seconds,
            kv_bytes=1,
            formula_kv_bytes=1,
            kv_bytes_match=True,
            experts_touched=None,
        )
        rows.append(row)
    return rows


def machine(fixed: float, per_sequence: float, batches=(1, 2, 4, 8, 16, 32, 64)):
    return steps_of({b: fixed + per_sequence * b for b in batches})


def test_the_fit_recovers_fixed_and_per_sequence_costs():
    fit = fit_batches(machine(0.010, 0.0005))
    assert fit.fixed_s == pytest.approx(0.010) and fit.per_sequence_s == pytest.approx(0.0005)
    assert fit.holds and fit.crossover_batch == pytest.approx(20.0)
    assert fit.measured_batches == [1, 64]


def test_the_fit_says_when_it_does_not_hold():
    rows = steps_of({1: 0.01, 2: 0.05, 4: 0.01, 8: 0.08, 16: 0.01})
    assert not fit_batches(rows).holds


def test_batching_is_nearly_free_while_the_fixed_cost_dominates():
    # 10 ms fixed, 0.5 ms a sequence: 10.5, 11, 12, 14 (+17%), 18 (+29%) ms
    assert nearly_free_up_to(machine(0.010, 0.0005)) == 8
    assert nearly_free_up_to(machine(0.0, 0.001)) == 1  # compute-bound from the start


def test_users_by_speed_is_the_largest_batch_within_the_step_target():
    rows = machine(0.010, 0.0005)  # 25 tokens/s: steps up to 40 ms; 32 -> 26 ms, 64 -> 42 ms
    fit = fit_batches(rows)
    users, how, between = users_by_speed(rows, fit, 25.0)
    assert how == "fit" and between == [32, 64]
    assert users == 60  # (0.040 - 0.010) / 0.0005, between the measured 32 and 64
    steps = steps_of(
        {1: 0.001, 2: 0.039, 4: 0.5, 8: 0.6}
    )  # no line fits: the measured batch stands
    assert users_by_speed(steps, fit_batches(steps), 25.0)[:2] == (2, "measured")


def test_users_by_speed_never_passes_the_largest_measured_batch():
    rows = machine(0.001, 0.0001)  # 64 users: 7.4 ms, well within 40 ms
    assert users_by_speed(rows, fit_batches(rows), 25.0) == (64, "lower bound", None)
    slow = machine(0.1, 0.001)
    assert users_by_speed(slow, fit_batches(slow), 25.0) == (0, "too slow", None)


def bound(rows, free_bytes, tokens_per_second=25.0):
    return users_bound(rows, fit_batches(rows), tokens_per_second, 2048, 1024, free_bytes, "fake")


def test_users_by_memory_is_capacitys_arithmetic():
    users = bound(machine(0.010, 0.0005), free_bytes=100 * 2**20)
    assert users.users_by_memory == (100 * 2**20) // (1024 * 2048) == 50


def test_the_smaller_bound_binds():
    rows = machine(0.010, 0.0005)  # 60 users by speed
    assert bound(rows, free_bytes=100 * 2**20).binding == "memory"  # 50 by memory
    assert bound(rows, free_bytes=2**30).binding == "speed"  # 512 by memory
    assert bound(machine(0.001, 0.0001), free_bytes=2**30).binding == "not reached"
    assert bound(rows, free_bytes=None).binding == "speed"  # memory unknown: only speed is


def test_a_real_decode_counts_its_cache_and_leaves_out_batches_past_the_cap(tiny_loaded, tiny_run):
    config = tiny_loaded.config
    per_batch = kv_formula_bytes(config.num_hidden_layers, len(PROMPT) + 3, 2, 16, 4)
    cap_gib = 2.5 * per_batch / 2**30  # room for batches 1 and 2, not 4
    settings = serve_settings(batches=[4, 1, 2], warmup=1, prefill_up_to=1, memory_cap_gib=cap_gib)
    served = serve(tiny_loaded.model, config, PROMPT, settings, "cpu", tiny_run)
    assert [row.batch for row in served.batches] == [1, 2] and served.left_out_by_cap == [4]
    one, two = served.batches
    assert one.prefill_s > 0 and two.prefill_s is None  # batch 2 continues from the prompt's cache
    for row in served.batches:
        assert row.kv_bytes == row.formula_kv_bytes == row.batch * per_batch
        assert len(row.decode_steps_s) == 3 and row.experts_touched is None
        assert row.tokens_per_second == pytest.approx(row.batch / row.decode_step_s)
    assert served.users.kv_bytes_per_token == per_batch // (len(PROMPT) + 3)


def test_a_moe_decode_counts_the_experts_a_step_touches(tmp_path, tiny_run):
    import torch

    from mminfer.loading import load_model
    from mminfer.model import MiniMindForCausalLM

    torch.manual_seed(0)
    config = small_config(use_moe=True, num_experts=4, positions=128)
    torch.save(MiniMindForCausalLM(config).state_dict(), tmp_path / "moe.pth")
    loaded = load_model(tmp_path / "moe.pth")
    settings = serve_settings(batches=[1, 8], warmup=0, prefill_up_to=1)
    served = serve(loaded.model, loaded.config, PROMPT, settings, "cpu", tiny_run)
    one, eight = served.batches
    assert one.experts_touched == 1.0  # one token, top-1: one expert a layer
    assert 1.0 < eight.experts_touched <= 4.0  # eight users who differ route to more experts


def test_each_user_of_a_batch_decodes_what_one_user_from_its_first_token_does(tiny_model):
    import torch

    from mminfer.serve import prompt_start, repeated

    cache, first_tokens = prompt_start(tiny_model, PROMPT, 3, "cpu")
    assert len(set(first_tokens)) == 3  # three users, three different continuations
    rows = torch.tensor([PROMPT + [token] for token in first_tokens])
    batch = tiny_model.generate(
        rows, max_new_tokens=4, past_key_values=repeated(cache, 3), **GREEDY
    )
    for row, token in zip(batch, first_tokens):
        alone = tiny_model.generate(torch.tensor([PROMPT + [token]]), max_new_tokens=4, **GREEDY)
        assert torch.equal(row, alone[0])
