"""The generation-length sweep (mminfer.measures.sweep.measure): lengths, counts, the step fit."""

from __future__ import annotations

import itertools
import json
import random

import pytest
from shapes import prompt_of

from mminfer.measures.sweep.measure import (
    CONTRADICTIONS,
    SweepSettings,
    attended_pairs,
    filled_steps,
    fit_step_costs,
    interpolated,
    length_point,
    predict,
    predicted_seconds,
    run_total,
    spread_doubts,
    spread_steps,
    spread_within_runs,
    sweep,
)
from mminfer.measures.sweep.sweep import StepFit, Sweep, SweepSteps, steady_step
from mminfer.model.counting import fed_with_cache_formula, fed_without_cache_formula
from mminfer.records import from_json, to_json
from mminfer.records.spread import coefficient_of_variation, verdict_of
from mminfer.timing.fit import nonnegative_least_squares

COSTS = {
    "fixed_s_with_cache": 3e-3,
    "fixed_s_without_cache": 4e-3,
    "per_token_s": 2e-5,
    "per_pair_s": 5e-8,
}


def synthetic_steps(
    prompt_len: int, longest: int, costs: dict, noise: float = 0.0, seed: int = 0
) -> dict:
    """Per-step times that follow the cost model exactly, times (1 + noise x uniform(-1, 1))."""
    rng = random.Random(seed)
    steps = {}
    for method, cached in (("with_cache", True), ("without_cache", False)):
        fed = (
            [prompt_len] + [1] * (longest - 1)
            if cached
            else [prompt_len + i for i in range(longest)]
        )
        fixed = costs["fixed_s_with_cache"] if cached else costs["fixed_s_without_cache"]
        steps[f"fed_{method}"] = fed
        steps[f"{method}_s"] = [
            (
                fixed
                + costs["per_token_s"] * f
                + costs["per_pair_s"] * attended_pairs(prompt_len, f, i)
            )
            * (1 + noise * rng.uniform(-1, 1))
            for i, f in enumerate(fed)
        ]
    return steps


def fit_of(costs: dict) -> StepFit:
    """A StepFit with the given costs (the rest as fit_step_costs would fill it)."""
    return StepFit(
        model="",
        method="",
        held_at_zero=[],
        r2=1.0,
        median_relative_residual={},
        holds=True,
        measured_new_tokens=[1, 1],
        measured_context=[1, 1],
        steps=0,
        **costs,
    )


def swept(model, run, lengths, all_steps_up_to=32, spread=8, runs=2):
    """sweep() of the tiny model after a 9-token prompt, one warm-up, on the CPU."""
    settings = SweepSettings(
        lengths=lengths,
        warmup=1,
        runs=runs,
        all_steps_up_to=all_steps_up_to,
        spread_steps=spread,
    )
    return sweep(
        model=model,
        prompt_ids=prompt_of(9),
        settings=settings,
        device="cpu",
        run=run,
        max_positions=64,
    )


@pytest.fixture(scope="module")
def tiny_sweep(tiny_model, tiny_run):
    return swept(tiny_model, tiny_run, [8, 2, 4, 4])  # every uncached step clocked (8 <= 32)


@pytest.fixture(scope="module")
def spread_sweep(tiny_model, tiny_run):
    """Uncached steps 0-2 clocked in one generation, then 2 spread steps (3 and 7) up to N = 8."""
    return swept(tiny_model, tiny_run, [2, 4, 8], all_steps_up_to=3, spread=2, runs=1)


# --- measuring ------------------------------------------------------------------------------------


def test_sweep_fed_counts_equal_the_formulas_at_every_length(tiny_sweep):
    assert tiny_sweep.lengths == [2, 4, 8] and tiny_sweep.longest == 8  # sorted, duplicates dropped
    for point in tiny_sweep.points:
        n = point.new_tokens
        assert point.fed_with_cache == point.formula_with_cache == 9 + n - 1
        assert point.fed_without_cache == point.formula_without_cache == n * 9 + n * (n - 1) // 2
        assert point.clocked_with_cache == point.clocked_without_cache == n
        assert point.token_ratio == point.fed_without_cache / point.fed_with_cache


def test_every_length_is_the_sum_of_its_first_steps(tiny_sweep):
    steps = tiny_sweep.steps
    assert len(steps.with_cache_s) == len(steps.without_cache_s) == 8
    assert steps.fed_with_cache == [9] + [1] * 7 and steps.fed_without_cache == list(range(9, 17))
    for point in tiny_sweep.points:
        n = point.new_tokens
        assert point.with_cache_s == pytest.approx(sum(steps.with_cache_s[:n]))
        assert point.without_cache_s == pytest.approx(sum(steps.without_cache_s[:n]))
        assert point.time_ratio == pytest.approx(point.without_cache_s / point.with_cache_s)
    assert all(seconds > 0 for seconds in steps.with_cache_s + steps.without_cache_s)


def test_ttft_is_the_first_cached_step_and_decode_the_later_ones(tiny_sweep):
    steps = tiny_sweep.steps.with_cache_s
    assert tiny_sweep.ttft_s == steps[0]
    assert tiny_sweep.decode_s_per_token == pytest.approx(sum(steps[1:]) / 7)
    for point in tiny_sweep.points:
        n = point.new_tokens
        assert point.decode_s_per_token == pytest.approx(sum(steps[1:n]) / (n - 1))


def test_sweep_states_its_conditions_and_survives_a_json_round_trip(tiny_sweep):
    assert tiny_sweep.threads >= 1 and tiny_sweep.runs == 2 and tiny_sweep.warmup == 1
    assert from_json(Sweep, json.loads(json.dumps(to_json(tiny_sweep)))) == tiny_sweep


# --- the uncached path clocked at a spread of steps -----------------------------------------------


def test_spread_steps_are_even_and_include_the_last():
    assert spread_steps(32, 255, 8) == [32, 64, 96, 128, 159, 191, 223, 255]
    assert spread_steps(3, 7, 2) == [3, 7]
    assert spread_steps(3, 7, 1) == [7]
    assert spread_steps(8, 7, 4) == [] and spread_steps(3, 7, 0) == []


def test_uncached_steps_are_clocked_up_to_the_bound_and_at_the_spread(spread_sweep):
    steps = spread_sweep.steps
    clocked = [i for i, seconds in enumerate(steps.without_cache_s) if seconds is not None]
    assert clocked == [0, 1, 2, 3, 7]
    assert steps.fed_without_cache == [9, 10, 11, 12, None, None, None, 16]  # P + i where clocked
    assert all(seconds is not None for seconds in steps.with_cache_s)  # the cached path: every step
    assert spread_sweep.uncached_ids_match is True  # each one-token generation picked the same id
    assert spread_sweep.fit.steps == 8 + 5  # the fit: every cached step, the five clocked uncached


def test_a_length_with_unclocked_steps_adds_their_fitted_times(spread_sweep):
    steps = spread_sweep.steps
    by_length = {point.new_tokens: point for point in spread_sweep.points}
    assert by_length[2].fed_without_cache == 9 + 10 and by_length[2].clocked_without_cache == 2
    long = by_length[8]
    assert long.fed_without_cache is None and long.clocked_without_cache == 5
    assert long.token_ratio == long.formula_without_cache / long.fed_with_cache
    # Issue 25: the fit's times fill the unclocked steps only where the fit holds; otherwise the
    # line between the clocked steps either side does (steps 4-6 lie between 3 and 7), where both
    # are steady (issue 47: one run is never steady, so nothing is filled: no time).
    if not spread_sweep.fit.holds and not all(steps.without_cache_steady[i] for i in (3, 7)):
        assert long.without_cache_from == "none" and long.without_cache_s is None
        return
    if spread_sweep.fit.holds:
        expected = sum(
            fitted if measured is None else measured
            for measured, fitted in zip(steps.without_cache_s, steps.fitted_without_cache_s)
        )
        assert long.without_cache_from == "fit"
    else:
        expected = sum(interpolated(steps.without_cache_s))
        assert long.without_cache_from == "interpolation"
    assert long.without_cache_s == pytest.approx(expected)
    assert long.without_cache_s == pytest.approx(sum(steps.filled_without_cache_s))
    assert (
        steps.without_cache_how[:4] == ["clocked"] * 4 and steps.without_cache_how[7] == "clocked"
    )


# --- fitting --------------------------------------------------------------------------------------


def test_attended_pairs_under_the_causal_mask():
    assert attended_pairs(5, 5, 0) == 15  # prefill: 1 + 2 + ... + 5
    assert attended_pairs(5, 1, 3) == 8  # one query against P + 3 keys
    assert attended_pairs(5, 8, 3) == 36  # no cache: 1 + ... + 8


def test_fit_recovers_known_costs_from_exact_step_times():
    fit = fit_step_costs(40, synthetic_steps(40, 64, COSTS))
    for term, value in COSTS.items():
        assert getattr(fit, term) == pytest.approx(value, rel=1e-6), term
    assert fit.r2 == pytest.approx(1.0) and fit.holds and fit.held_at_zero == []
    assert fit.measured_context == [40, 103]


def test_fit_recovers_known_costs_from_noisy_step_times():
    fit = fit_step_costs(40, synthetic_steps(40, 128, COSTS, noise=0.05, seed=3))
    assert fit.fixed_s_with_cache == pytest.approx(COSTS["fixed_s_with_cache"], rel=0.05)
    assert fit.per_token_s == pytest.approx(COSTS["per_token_s"], rel=0.3)
    assert fit.holds


def test_fit_never_reports_a_negative_cost():
    # no attention term in the truth and a fixed cost too small to see: plain least squares would go
    # negative on some term; the fit holds it at zero and says so
    costs = {
        "fixed_s_with_cache": 1e-3,
        "fixed_s_without_cache": 0.0,
        "per_token_s": 3e-5,
        "per_pair_s": 0.0,
    }
    fit = fit_step_costs(30, synthetic_steps(30, 64, costs, noise=0.2, seed=1))
    assert all(getattr(fit, term) >= 0 for term in COSTS)
    assert fit.held_at_zero


def test_nonnegative_least_squares_holds_only_a_negative_coefficient_at_zero():
    rows = [[1.0, float(x)] for x in range(10)]
    x, held = nonnegative_least_squares(rows, [2.0 + 0.5 * x for x in range(10)])
    assert x == pytest.approx([2.0, 0.5]) and held == []  # plain least squares where positive
    y = [5.0 - 0.5 * x for x in range(10)]  # the unconstrained slope is negative
    x, held = nonnegative_least_squares(rows, y)
    assert x[1] == 0 and held == [1] and x[0] == pytest.approx(sum(y) / len(y))


def test_a_fit_that_does_not_explain_the_steps_says_so():
    steps = synthetic_steps(30, 64, COSTS)
    rng = random.Random(0)
    steps["with_cache_s"] = [rng.uniform(0.001, 0.1) for _ in steps["with_cache_s"]]  # pure noise
    assert not fit_step_costs(30, steps).holds


# --- predicting -----------------------------------------------------------------------------------


def test_predicted_time_is_the_sum_of_the_fitted_steps():
    steps = synthetic_steps(40, 16, COSTS)
    for n, cached in itertools.product((1, 5, 16), (True, False)):
        method = "with_cache_s" if cached else "without_cache_s"
        assert predicted_seconds(fit_of(COSTS), 40, n, cached) == pytest.approx(
            sum(steps[method][:n])
        )


def test_predictions_stop_at_the_models_positions_and_mark_extrapolation():
    rows = predict(fit_of(COSTS), prompt_len=200, longest=64, max_positions=512)
    assert rows[-1].new_tokens == 256  # 4 x the longest measured, below 512 - 200
    rows = predict(fit_of(COSTS), prompt_len=200, longest=128, max_positions=512)
    assert rows[-1].new_tokens == 312  # 512 - 200: the longest generation the model can run
    assert all(row.new_tokens <= 312 for row in rows)
    assert [row.measured for row in rows] == [row.new_tokens <= 128 for row in rows]
    for row in rows:
        assert row.token_ratio == fed_without_cache_formula(
            200, row.new_tokens
        ) / fed_with_cache_formula(200, row.new_tokens)
        assert 0 < row.fixed_share_with_cache <= 1


def test_predictions_never_pass_the_positions_even_below_the_longest_measured():
    rows = predict(fit_of(COSTS), prompt_len=300, longest=256, max_positions=512)
    assert [row.new_tokens for row in rows][-1] == 212  # 512 - 300, though 256 steps were measured
    assert all(1 <= row.new_tokens <= 212 for row in rows)


# --- spreads, verdicts and the interpolation (issue 25) -------------------------------------------


def test_every_clocked_step_carries_its_range_over_the_runs(tiny_sweep):
    steps = tiny_sweep.steps
    for low, median, high in zip(
        steps.with_cache_low_s, steps.with_cache_s, steps.with_cache_high_s
    ):
        assert low <= median <= high
    assert tiny_sweep.cv_with_cache >= 0 and tiny_sweep.noisy_cv == 0.1
    assert tiny_sweep.verdict in ("ok", "noisy", "untrusted")
    assert "single_run" not in tiny_sweep.doubts  # two runs


def runs_of(with_cache, without_cache, with_cache_within=0.0, without_cache_within=0.0) -> dict:
    """The per-run totals and spreads within the runs that measure_steps keeps."""
    return {
        "with_cache_runs_s": with_cache,
        "without_cache_runs_s": without_cache,
        "with_cache_cv_within_runs": with_cache_within,
        "without_cache_cv_within_runs": without_cache_within,
    }


def test_steady_runs_are_ok_and_a_busy_run_is_noisy():
    quiet = spread_doubts(runs_of([1.0, 1.02, 0.99], [5.0, 5.1, 4.95]), 3, 5.0)
    assert quiet == [] and verdict_of(quiet, CONTRADICTIONS) == "ok"
    busy = spread_doubts(runs_of([1.0, 2.5, 1.0], [5.0, 5.1, 4.95]), 3, 5.0)
    assert busy == ["with_cache_spread"] and verdict_of(busy, CONTRADICTIONS) == "noisy"


def test_one_run_has_no_spread_and_a_cache_not_faster_is_untrusted():
    assert spread_doubts(runs_of([1.0], [5.0]), 1, 5.0) == ["single_run"]
    doubts = spread_doubts(runs_of([1.0, 1.0], [0.9, 0.9]), 2, 0.9)
    assert doubts == ["cache_not_faster"] and verdict_of(doubts, CONTRADICTIONS) == "untrusted"


# a steady busy loop on every core: each run's cached decode steps jump between 2 and 4 ms in the
# same pattern, so the runs' totals agree
BUSY_CACHED = [0.020] + [0.002, 0.0038, 0.0021, 0.0041, 0.002, 0.0039, 0.0022, 0.004] * 2
# quiet uncached steps growing with the context, 5 -> 20 ms over 16 steps, then two spread ones
QUIET_UNCACHED = [0.005 + 0.001 * step for step in range(16)] + [None] * 8 + [0.03, None, 0.035]


def test_a_steady_busy_loop_that_slows_every_run_alike_is_noisy():
    runs = [BUSY_CACHED] * 3
    within = spread_within_runs(runs, use_cache=True, short=16)
    totals = [run_total(seconds) for seconds in runs]
    doubts = spread_doubts(runs_of(totals, [5.0] * 3, with_cache_within=within), 3, 5.0)
    assert doubts == ["with_cache_spread_within_runs"]
    assert verdict_of(doubts, CONTRADICTIONS) == "noisy"


def test_uncached_steps_that_grow_with_the_context_are_not_noise():
    # the plain spread of these steps is 38 % of their mean; around their trend it is 0
    runs = [QUIET_UNCACHED] * 3
    within = spread_within_runs(runs, use_cache=False, short=16)
    assert within == pytest.approx(0.0, abs=1e-9)
    assert coefficient_of_variation(QUIET_UNCACHED[:16]) > 0.3
    quiet_cached = [[0.020] + [0.002 + 0.00001 * step for step in range(16)]] * 3
    cached_within = spread_within_runs(quiet_cached, use_cache=True, short=16)
    doubts = spread_doubts(runs_of([1.0, 1.0, 1.0], [5.0, 5.0, 5.0], cached_within, within), 3, 5.0)
    assert doubts == [] and verdict_of(doubts, CONTRADICTIONS) == "ok"


def test_uncached_steps_that_jump_around_their_trend_are_noisy():
    # the busy loop on the uncached side: its steps jump 30 % either side of their rising trend,
    # in the same pattern every run, so the runs' totals agree and only the steps show it
    jumpy = [
        None if seconds is None else seconds * (1.3 if step % 2 else 0.7)
        for step, seconds in enumerate(QUIET_UNCACHED)
    ]
    within = spread_within_runs([jumpy] * 3, use_cache=False, short=16)
    doubts = spread_doubts(runs_of([1.0] * 3, [5.0] * 3, without_cache_within=within), 3, 5.0)
    assert doubts == ["without_cache_spread_within_runs"]
    assert verdict_of(doubts, CONTRADICTIONS) == "noisy"


def test_unclocked_steps_lie_on_the_line_between_the_clocked_ones():
    assert interpolated([1.0, None, None, 4.0, None]) == [1.0, 2.0, 3.0, 4.0, None]
    assert interpolated([None, 2.0, None, 6.0]) == [None, 2.0, 4.0, 6.0]  # never extrapolated


def test_filled_steps_come_from_the_fit_where_it_holds_else_from_the_line():
    measured = [1.0, None, 3.0, None]
    fitted = [1.1, 2.2, 3.3, 4.4]
    assert filled_steps(measured, fitted, True) == ([1.0, 2.2, 3.0, 4.4], ["clocked", "fit"] * 2)
    times, how = filled_steps(measured, fitted, False)
    assert times == [1.0, 2.0, 3.0, None] and how == ["clocked", "interpolation", "clocked", "none"]


def test_no_step_is_interpolated_across_a_clocked_step_whose_runs_are_noisy():
    # issue 47: N = 256 "≈7.0배" interpolated across one outlier step (174.7 ms, runs 45-676)
    outlier = [0.045, 0.1747, 0.676, 0.17, 0.18]
    steady = [steady_step([0.1, 0.101, 0.099, 0.1, 0.1], 0.2), steady_step(outlier, 0.2)]
    assert steady == [True, False] and not steady_step([0.1], 0.2)  # one run: never steady
    times, how = filled_steps([1.0, None, 3.0, None], [0.0] * 4, False, [True, False, False, False])
    assert times == [1.0, None, 3.0, None] and how == ["clocked", "none", "clocked", "none"]


def steps_with_a_gap(fit_holds: bool, last_clocked: bool = True) -> SweepSteps:
    """Four uncached steps of a busy machine's sweep after a 10-token prompt: steps 1 and 2 not
    clocked; the fit (which says 1 s a step) holds or not."""
    measured = [0.010, None, None, 0.040 if last_clocked else None]
    fitted = [1.0] * 4
    filled, how = filled_steps(measured, fitted, fit_holds)
    fed = [10, None, None, 13 if last_clocked else None]
    return SweepSteps(
        with_cache_s=[0.005] * 4,
        fed_with_cache=[10, 1, 1, 1],
        without_cache_s=measured,
        fed_without_cache=fed,
        fitted_with_cache_s=[1.0] * 4,
        fitted_without_cache_s=fitted,
        with_cache_low_s=[0.005] * 4,
        with_cache_high_s=[0.005] * 4,
        without_cache_low_s=measured,
        without_cache_high_s=measured,
        filled_without_cache_s=filled,
        without_cache_how=how,
        with_cache_runs_s=[[0.005] * 4] * 3,
        without_cache_runs_s=[measured] * 3,
        without_cache_steady=[seconds is not None for seconds in measured],
    )


def test_a_length_keeps_its_time_when_the_fit_fails():
    point = length_point(10, 4, steps_with_a_gap(fit_holds=False))
    assert point.without_cache_from == "interpolation"
    assert point.without_cache_s == pytest.approx(0.010 + 0.020 + 0.030 + 0.040)
    assert point.time_ratio == pytest.approx(0.1 / 0.020)
    assert point.fed_without_cache is None  # not every step ran: the token ratio is the formula's
    assert point.token_ratio == fed_without_cache_formula(10, 4) / 13
    fitted = length_point(10, 4, steps_with_a_gap(fit_holds=True))
    assert fitted.without_cache_from == "fit" and fitted.without_cache_s == pytest.approx(2.05)
    clocked = length_point(10, 1, steps_with_a_gap(fit_holds=False))
    assert clocked.without_cache_from == "clocked" and clocked.without_cache_s == 0.010


def test_a_length_past_the_last_clocked_step_has_no_time_without_the_fit():
    point = length_point(10, 4, steps_with_a_gap(fit_holds=False, last_clocked=False))
    assert point.without_cache_from == "none"
    assert point.without_cache_s is None and point.time_ratio is None


# --- one quantity timed by two jobs (issue 47 point 4) --------------------------------------------


def test_two_timings_of_one_quantity_overlap_part_or_cannot_say():
    from mminfer.records.interval import median_interval
    from mminfer.records.reconcile import reconcile, reconcile_runs

    quiet = median_interval([1.0, 1.01, 0.99, 1.02, 0.98])
    assert reconcile(quiet, median_interval([1.005, 1.0, 1.03, 0.97, 1.01])) == "overlap"
    assert reconcile(quiet, median_interval([1.5, 1.51, 1.49, 1.52, 1.48])) == "apart"
    assert reconcile(quiet, median_interval([1.5, 1.51, 1.49])) == "undecided"  # 75 % < 90 %
    assert reconcile_runs([1.0, 1.01, 0.99, 1.02, 0.98], [2.0] * 5) == "apart"


def test_apart_timings_name_the_busy_machine_and_the_methods():
    from dataclasses import replace

    from reportcases import cases

    from mminfer.records.machine import Contention
    from mminfer.report.render import render_reports

    def beyond(records):
        return render_reports(records)["beyond.md"]

    records = cases()["speedup_disagrees"]["records"]
    busy = Contention(cpu_share=0.4, cpu_pressure=0.5, wall_s=3.0, threads=2, busy=True)
    report = beyond(records | {"sweep": replace(records["sweep"], contention=busy)})
    assert "겹치지 않는다: 이 절을 잴 때만 기계가 바빴고, 방법이 다르다(time.json은" in report
    assert "이 절을 잴 때만 기계가 바빴고" not in beyond(records)
