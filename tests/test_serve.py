"""What one machine serves (mminfer.measures.serve.measure) on hand-made steps, then one real
decode of the tiny model."""

from __future__ import annotations

import pytest
from shapes import GREEDY, prompt_of, serve_settings, small_config

from mminfer.measures.serve.measure import (
    batch_step,
    cliffs,
    fit_batches,
    growth_stops_at,
    nearly_free_up_to,
    pass_order,
    peak,
    serve,
    table_doubts,
    users_bound,
    users_by_speed,
)
from mminfer.measures.serve.serve import BatchStep, CacheLevel
from mminfer.model.cachebytes import kv_formula_bytes
from mminfer.timing.machine import cpu_caches

PROMPT = prompt_of(21)


def steps_of(seconds_by_batch: dict[int, float], kv_per_user: int = 1) -> list[BatchStep]:
    """serve.batch_step rows whose decode step takes the given seconds in each of two passes."""
    rows = []
    smaller = None
    for batch, seconds in seconds_by_batch.items():
        passes = [[seconds] * 2, [seconds] * 2]
        kv = kv_per_user * batch
        row = batch_step(batch, passes, [seconds * 10] * 2, kv, kv, None, smaller)
        rows.append(row)
        smaller = row
    return rows


def machine(fixed: float, per_sequence: float, batches=(1, 2, 4, 8, 16, 32, 64)):
    return steps_of({b: fixed + per_sequence * b for b in batches})


def test_the_fit_recovers_fixed_and_per_sequence_costs():
    fit = fit_batches(machine(0.010, 0.0005))
    assert fit.fixed_s == pytest.approx(0.010) and fit.per_sequence_s == pytest.approx(0.0005)
    assert fit.holds and fit.crossover_batch == pytest.approx(20.0)
    assert fit.measured_batches == [1, 64]


def test_the_fit_says_when_it_does_not_hold_and_two_batches_claim_nothing():
    assert not fit_batches(steps_of({1: 0.01, 2: 0.05, 4: 0.01, 8: 0.08, 16: 0.01})).holds
    fit = fit_batches(steps_of({1: 0.010, 2: 0.012}))  # two batches fit any line
    assert fit.fixed_s == pytest.approx(0.008) and fit.per_sequence_s == pytest.approx(0.002)
    assert not fit.holds and fit.least_batches == 3


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
    steps = steps_of({1: 0.001, 2: 0.039, 4: 0.5, 8: 0.6})  # no line fits: the measured batch
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
    per_batch = kv_formula_bytes(
        layers=config.num_hidden_layers,
        tokens=len(PROMPT) + 3,
        kv_heads=2,
        head_dim=16,
        bytes_per_element=4,
    )
    cap_gib = 2.5 * per_batch / 2**30  # room for batches 1 and 2, not 4
    settings = serve_settings(batches=[4, 1, 2], warmup=1, prefill_up_to=1, memory_cap_gib=cap_gib)
    served = serve(
        model=tiny_loaded.model,
        config=config,
        prompt_ids=PROMPT,
        settings=settings,
        device="cpu",
        run=tiny_run,
    )
    assert [row.batch for row in served.batches] == [1, 2] and served.left_out_by_cap == [4]
    one, two = served.batches
    assert one.prefill_s > 0 and two.prefill_s is None  # batch 2 continues from the prompt's cache
    for row in served.batches:
        assert row.kv_bytes == row.formula_kv_bytes == row.batch * per_batch
        # every decode step of every pass: 3 steps in each of 2 passes
        assert len(row.decode_steps_s) == 3 * 2 and row.experts_touched is None
        assert len(row.pass_step_s) == 2 and row.step_low_s <= row.step_high_s
        assert row.verdict in ("ok", "noisy", "untrusted")
        assert row.tokens_per_second == pytest.approx(row.batch / row.decode_step_s)
        assert row.decode_step_s == row.decode_step_interval.median  # one figure for the step
    assert served.users.kv_bytes_per_token == per_batch // (len(PROMPT) + 3)
    assert len(one.prefills_s) == 2 and served.passes == 2
    assert served.verdict in ("ok", "noisy", "untrusted")


def test_a_moe_decode_counts_the_experts_a_step_touches(tmp_path, tiny_run):
    import torch

    from mminfer.model.loading import load_model
    from mminfer.model.twin import MiniMindForCausalLM

    torch.manual_seed(0)
    config = small_config(use_moe=True, num_experts=4, positions=128)
    torch.save(MiniMindForCausalLM(config).state_dict(), tmp_path / "moe.pth")
    loaded = load_model(tmp_path / "moe.pth")
    settings = serve_settings(batches=[1, 8], warmup=0, prefill_up_to=1)
    served = serve(
        model=loaded.model,
        config=loaded.config,
        prompt_ids=PROMPT,
        settings=settings,
        device="cpu",
        run=tiny_run,
    )
    one, eight = served.batches
    assert one.experts_touched == 1.0  # one token, top-1: one expert a layer
    assert 1.0 < eight.experts_touched <= 4.0  # eight users who differ route to more experts


def test_each_user_of_a_batch_decodes_what_one_user_from_its_first_token_does(tiny_model):
    import torch

    from mminfer.measures.serve.measure import prompt_start, repeated

    cache, first_tokens = prompt_start(tiny_model, PROMPT, 3, "cpu")
    assert len(set(first_tokens)) == 3  # three users, three different continuations
    rows = torch.tensor([PROMPT + [token] for token in first_tokens])
    batch = tiny_model.generate(
        rows, max_new_tokens=4, past_key_values=repeated(cache, 3), **GREEDY
    )
    for row, token in zip(batch, first_tokens):
        alone = tiny_model.generate(torch.tensor([PROMPT + [token]]), max_new_tokens=4, **GREEDY)
        assert torch.equal(row, alone[0])


# --- passes, spreads and verdicts ----------------------------------------------------------------


def test_passes_go_up_then_down_so_drift_hits_every_batch_alike():
    assert pass_order([1, 2, 4], 3) == [1, 2, 4, 4, 2, 1, 1, 2, 4]


def test_steady_passes_are_ok():
    rows = machine(0.010, 0.0005)
    assert all(row.verdict == "ok" and row.doubts == [] for row in rows)
    assert rows[0].cv_decode_step == 0 and rows[0].step_low_s == rows[0].step_high_s == 0.0105


def test_a_batch_whose_passes_disagree_is_noisy():
    # a busy machine during the second pass: its steps take twice as long
    row = batch_step(2, [[0.010] * 3, [0.020] * 3], [0.05, 0.05], 1, 1, None, None)
    assert row.doubts == ["decode_spread"] and row.verdict == "noisy"
    assert row.step_low_s == 0.010 and row.step_high_s == 0.020 and row.pass_step_s == [0.01, 0.02]
    assert row.decode_step_s == 0.015  # the median of all six steps
    assert table_doubts(machine(0.01, 0.0005)[:1] + [row]) == ["decode_spread"]


def test_a_larger_batch_faster_than_a_smaller_one_is_untrusted():
    # the issue's busy demo: B = 2's prefill 24 ms against 70 ms at B = 1
    one = batch_step(1, [[0.010] * 3] * 2, [0.070] * 2, 1, 1, None, None)
    two = batch_step(2, [[0.0104] * 3] * 2, [0.024] * 2, 2, 2, None, one)
    assert two.doubts == ["prefill_faster_than_smaller_batch"] and two.verdict == "untrusted"
    faster = batch_step(2, [[0.005] * 3] * 2, None, 2, 2, None, one)
    assert faster.doubts == ["decode_faster_than_smaller_batch"] and faster.verdict == "untrusted"


# a steady busy loop on every core: in every pass the steps jump between 10 and 19 ms alike, so
# the passes' medians agree
BUSY_PASS = [0.010, 0.018, 0.011, 0.017, 0.010, 0.019, 0.012, 0.016]


def test_a_steady_busy_loop_that_slows_every_pass_alike_is_noisy():
    row = batch_step(1, [BUSY_PASS] * 3, None, 1, 1, None, None)
    assert row.cv_decode_step == 0  # the passes agree
    assert row.doubts == ["decode_spread_within_passes"] and row.verdict == "noisy"


def test_quiet_steps_growing_with_the_context_stay_ok():
    # 10 -> 14.2 ms over the pass (the context grows a token a step, here steeply), each step
    # 0.5 % off the line: the plain spread of a pass is 12 %, around its trend 0.5 %
    jitter = [0.005, -0.005, 0.0, 0.005, -0.005, 0.0, 0.005, -0.005]
    growing = [0.010 * (1 + 0.06 * step) * (1 + off) for step, off in enumerate(jitter)]
    row = batch_step(1, [growing] * 3, [0.05] * 3, 1, 1, None, None)
    assert row.doubts == [] and row.verdict == "ok"


def test_one_pass_has_no_spread_to_judge():
    row = batch_step(1, [[0.010] * 3], None, 1, 1, None, None)
    assert row.doubts == ["single_pass"] and row.verdict == "noisy"


# --- the peak, where growth stops, the cliffs ----------------------------------------------------

# The quiet course model: 429 tokens/s at B = 1, 2,274 at B = 32, a 48 ms step at 64.
COURSE = {1: 0.00233, 2: 0.0026, 4: 0.0032, 8: 0.0044, 16: 0.0078, 32: 0.01407, 64: 0.048}
COURSE_KV_PER_USER = 2 * 4 * 217 * 2 * 32 * 4  # layers 4, P + 16 tokens, 2 KV heads, float32


def test_the_peak_and_where_throughput_stops_growing():
    rows = steps_of(COURSE, COURSE_KV_PER_USER)
    top = peak(rows)
    assert top.batch == 32 and top.tokens_per_second == pytest.approx(32 / 0.01407)
    # 16 -> 32 still gains 10.9 % (>= 10 %); 32 -> 64 loses: growth stops at 32
    assert growth_stops_at(rows, 0.10).batch == 32
    # stricter: neither 16 -> 32 (+10.9 %) nor 8 -> 16 (+12.8 %) counts, 4 -> 8 (+45 %) does
    assert growth_stops_at(rows, 0.15).batch == 8
    # each step up under 25 % longer: 2.33 -> 2.6 (+12 %) -> 3.2 ms (+23 %), then 4.4 ms (+38 %)
    assert nearly_free_up_to(rows) == 4


def test_a_flat_region_is_nearly_free_and_throughput_still_grows_at_the_end():
    rows = machine(0.010, 0.00001)  # 10.01 ms at B = 1, 10.64 ms at B = 64
    assert nearly_free_up_to(rows) == 64 and cliffs(rows, [], 4, 0) == []
    assert peak(rows).batch == 64 and growth_stops_at(rows, 0.10).batch == 64


COURSE_WEIGHTS = 4_900_000 * 4  # the course model's 4.9M parameters in float32


def test_a_cliff_is_the_step_growing_faster_than_the_batch_beside_the_cache_it_outgrew():
    # a step reads 19.6 MB of weights and the KV cache: 33.8 MB at B = 32, 48.0 MB at 64
    rows = steps_of(COURSE, COURSE_KV_PER_USER)
    l3 = CacheLevel(name="L3", bytes=40 << 20)
    found = cliffs(rows, [CacheLevel(name="L2", bytes=2 << 20), l3], 4, COURSE_WEIGHTS)
    assert [(c.from_batch, c.to_batch) for c in found] == [(32, 64)]
    cliff = found[0]
    assert cliff.step_ratio == pytest.approx(0.048 / 0.01407) and cliff.batch_ratio == 2
    assert cliff.kv_bytes_after == 64 * COURSE_KV_PER_USER
    assert cliff.attention_kv_bytes_after == 4 * 64 * COURSE_KV_PER_USER
    assert cliff.step_bytes_after == COURSE_WEIGHTS + 64 * COURSE_KV_PER_USER
    assert cliff.crossed == [l3] and cliff.likely_cause == "cache"


def test_a_cliff_past_no_cache_size_names_no_cause():
    rows = steps_of(COURSE, COURSE_KV_PER_USER)
    found = cliffs(rows, [CacheLevel(name="L3", bytes=500 << 20)], 4, COURSE_WEIGHTS)
    assert found[0].crossed == [] and found[0].likely_cause == "unknown"
    # a cache the weights alone outgrow was outgrown before the cliff: not its cause
    found = cliffs(rows, [CacheLevel(name="L2", bytes=2 << 20)], 4, COURSE_WEIGHTS)
    assert found[0].crossed == []


def test_a_cache_only_attentions_repeated_kv_outgrows_names_no_cause():
    # as stored, a step reads 33.8 -> 48.0 MB; after repeat_kv (x 4) attention sees 76.5 ->
    # 133.4 MB: a 100 MiB cache lies only in that span, which is context, not the step's reads
    rows = steps_of(COURSE, COURSE_KV_PER_USER)
    found = cliffs(rows, [CacheLevel(name="L3", bytes=100 << 20)], 4, COURSE_WEIGHTS)
    assert found[0].attention_kv_bytes_before + COURSE_WEIGHTS < 100 << 20
    assert found[0].attention_kv_bytes_after + COURSE_WEIGHTS > 100 << 20
    assert found[0].crossed == [] and found[0].likely_cause == "unknown"


def test_a_cliff_between_noisy_batches_names_no_cause():
    rows = steps_of(COURSE, COURSE_KV_PER_USER)
    noisy = batch_step(64, [[0.030] * 2, [0.066] * 2], None, rows[-1].kv_bytes, 1, None, rows[-2])
    found = cliffs(rows[:-1] + [noisy], [CacheLevel(name="L3", bytes=40 << 20)], 4, COURSE_WEIGHTS)
    assert found[0].likely_cause == "spread" and found[0].crossed != []


def test_the_fit_in_relative_error_keeps_the_small_batches_and_leaves_out_the_cliff():
    fit = fit_batches(steps_of(COURSE))
    assert fit.fitted_batches == [1, 32] and fit.measured_batches == [1, 64] and fit.holds
    assert fit.median_relative_residual < 0.25
    assert all(error <= 0.25 for error in fit.relative_residuals[:6])
    assert fit.relative_residuals[6] > 0.25  # B = 64 is past where the line holds
    assert 0.0015 < fit.fixed_s < 0.0025  # near the 2.33 ms step at B = 1, not 0


def test_the_device_caches_are_read_from_sysfs(tmp_path):
    for index, (level, kind, size) in enumerate(
        [
            (1, "Data", "48K"),
            (1, "Instruction", "64K"),
            (2, "Unified", "2048K"),
            (3, "Unified", "32M"),
        ]
    ):
        folder = tmp_path / f"index{index}"
        folder.mkdir()
        (folder / "level").write_text(f"{level}\n")
        (folder / "type").write_text(f"{kind}\n")
        (folder / "size").write_text(f"{size}\n")
    names = [(level.name, level.bytes) for level in cpu_caches(tmp_path)]
    assert names == [("L1d", 48 << 10), ("L2", 2 << 20), ("L3", 32 << 20)]
    assert cpu_caches(tmp_path / "absent") == []


def fake_cpus(root, caches: dict[str, tuple[str, str, list[str]]]) -> None:
    """A sysfs cpu folder under ``root``: caches {indexN: (level, type and size, each CPU's
    shared_cpu_list)}, one cpuK folder per entry of the lists."""
    for index, (level, kind_size, shared_lists) in caches.items():
        kind, size = kind_size.split()
        for cpu, shared in enumerate(shared_lists):
            folder = root / f"cpu{cpu}" / "cache" / index
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "level").write_text(f"{level}\n")
            (folder / "type").write_text(f"{kind}\n")
            (folder / "size").write_text(f"{size}\n")
            (folder / "shared_cpu_list").write_text(f"{shared}\n")


# four cores, L1d and L2 one per core, L3 shared by all four
FOUR_CORES = {
    "index0": ("1", "Data 48K", ["0", "1", "2", "3"]),
    "index1": ("1", "Instruction 32K", ["0", "1", "2", "3"]),
    "index2": ("2", "Unified 2048K", ["0", "1", "2", "3"]),
    "index3": ("3", "Unified 32M", ["0-3"] * 4),
}


def test_each_threads_own_core_caches_count_once_per_thread_and_a_shared_one_once(tmp_path):
    fake_cpus(tmp_path, FOUR_CORES)
    cache = tmp_path / "cpu0" / "cache"
    found = [(level.name, level.bytes) for level in cpu_caches(cache, threads=2, cpus={0, 1, 2, 3})]
    assert found == [("2 x L1d", 2 * 48 << 10), ("2 x L2", 2 * 2 << 20), ("L3", 32 << 20)]
    one = [(level.name, level.bytes) for level in cpu_caches(cache, threads=1, cpus={0, 1, 2, 3})]
    assert one == [("L1d", 48 << 10), ("L2", 2 << 20), ("L3", 32 << 20)]


def test_more_threads_than_cores_hold_no_more_copies_than_the_cores_have(tmp_path):
    fake_cpus(tmp_path, FOUR_CORES)
    cache = tmp_path / "cpu0" / "cache"
    found = {level.name: level.bytes for level in cpu_caches(cache, threads=8, cpus={0, 1, 2, 3})}
    assert found == {"4 x L1d": 4 * 48 << 10, "4 x L2": 4 * 2 << 20, "L3": 32 << 20}
    # a process allowed on two of the cores holds two copies at most
    found = {level.name: level.bytes for level in cpu_caches(cache, threads=8, cpus={0, 1})}
    assert found == {"2 x L1d": 2 * 48 << 10, "2 x L2": 2 * 2 << 20, "L3": 32 << 20}


def test_hyperthreads_sharing_a_cores_l2_hold_one_copy(tmp_path):
    # two cores of two hardware threads each: CPUs 0 and 2 share one core's L1d and L2
    siblings = ["0,2", "1,3", "0,2", "1,3"]
    fake_cpus(
        tmp_path,
        {
            "index0": ("1", "Data 48K", siblings),
            "index2": ("2", "Unified 2048K", siblings),
            "index3": ("3", "Unified 32M", ["0-3"] * 4),
        },
    )
    cache = tmp_path / "cpu0" / "cache"
    found = {level.name: level.bytes for level in cpu_caches(cache, threads=4, cpus={0, 1, 2, 3})}
    assert found == {"2 x L1d": 2 * 48 << 10, "2 x L2": 2 * 2 << 20, "L3": 32 << 20}
    found = {level.name: level.bytes for level in cpu_caches(cache, threads=4, cpus={0, 2})}
    assert found == {"L1d": 48 << 10, "L2": 2 << 20, "L3": 32 << 20}
