"""The oracles of sweep.json's sentences: each recomputes its words from the runs' raw steps
(each run's sums, each step's runs) on its own, never with mminfer.measures.sweep.decide's
stored intervals, which the sentences call.
``ORACLES[key](records, about)``: tests/oracles.py merges them.
"""

from __future__ import annotations

import statistics

from oracles_timing import judged_by

from mminfer.measures.sweep.sweep import (
    Sweep,
    clocked_among_first,
    clocking,
    last_clocked,
    run_sums,
    step_runs,
)
from mminfer.measures.time.latency import Latency
from mminfer.measures.time.time import Timing
from mminfer.records import BAND_GAP, BAND_SHARE, interval, spread
from mminfer.records.interval import look_level, median_interval, paired_ratios, ratio_interval
from mminfer.records.reconcile import reconcile, reconcile_runs
from mminfer.report.sections.sweep import joins as sweep_decide


def clocked_in_runs(sweep: Sweep) -> list[bool]:
    """Each uncached step of the longest generation: whether any run clocked it (the raw runs)."""
    runs = sweep.steps.without_cache_runs_s
    return [any(run[step] is not None for run in runs) for step in range(sweep.longest)]


def uncached_clocking_in_runs(sweep: Sweep, chosen: str) -> bool:
    """sweep.clocking's check: the variant and the counts the words print, from the raw runs."""
    variant, first, spread = clocking(clocked_in_runs(sweep))
    return variant == chosen and (first, spread) == sweep.clocked_counts()


def interpolated_in_runs(sweep: Sweep) -> bool:
    """sweep.interpolated's check: where the fit does not hold, some step no run clocked has a
    time all the same (filled between its clocked neighbours)."""
    filled = sweep.steps.filled_without_cache_s
    clocked = clocked_in_runs(sweep)
    unclocked_with_time = any(
        not ran and seconds is not None for ran, seconds in zip(clocked, filled)
    )
    return not sweep.fit.holds and unclocked_with_time


def filled_by_in_runs(sweep: Sweep, chosen: str) -> bool:
    """sweep.filled's check: the steps no run clocked, from the raw runs, and their filled
    times: from the fit where it holds ("fit"), none at all where it fails ("none")."""
    filled = sweep.steps.filled_without_cache_s
    times = [seconds for ran, seconds in zip(clocked_in_runs(sweep), filled) if not ran]
    if chosen == "fit":
        return sweep.fit.holds and bool(times) and None not in times
    return not sweep.fit.holds and bool(times) and all(seconds is None for seconds in times)


def stops_before_longest_in_runs(sweep: Sweep) -> bool:
    """sweep.last_clocked's check: no run clocked the longest generation's last step, and the
    step the words name is the last any run clocked."""
    clocked = clocked_in_runs(sweep)
    last = max(step for step, ran in enumerate(clocked) if ran)
    return not clocked[-1] and last == sweep.last_clocked_step()


def longest_estimate_in_runs(sweep: Sweep) -> bool:
    """sweep.longest_estimate's check: some of the longest length's uncached steps no run
    clocked."""
    return not all(clocked_in_runs(sweep)[: sweep.points[-1].new_tokens])


def time_against_tokens_supported(sweep: Sweep, chosen: str) -> bool:
    """sweep.time_below_tokens's check: each run's sums at the longest length, recomputed."""
    point = sweep.points[-1]
    steps = sweep.steps
    without = run_sums(steps.without_cache_runs_s, steps.filled_without_cache_s, point.new_tokens)
    with_ = run_sums(steps.with_cache_runs_s, steps.with_cache_s, point.new_tokens)
    if without is None:
        return False
    ratio = ratio_interval(without, with_, interval.FAMILY_LEVEL)
    found = interval.against(ratio, point.token_ratio)
    return {"below": "below", "above": "not_below", "undecided": "undecided"}[found] == chosen


def fixed_share_supported(sweep: Sweep, chosen: str) -> bool:
    """sweep.fixed_share's check: the cached runs' sums at N, recomputed, against N x fixed."""
    point = sweep.points[-1]
    sums = run_sums(sweep.steps.with_cache_runs_s, sweep.steps.with_cache_s, point.new_tokens)
    runs = median_interval(sums, interval.FAMILY_LEVEL)
    fixed_total = point.new_tokens * sweep.fit.fixed_s_with_cache
    if not (sweep.fit.holds and runs.decisive):
        return False
    if chosen == "share":
        return fixed_total <= runs.low
    return fixed_total > runs.high


def uncached_growth_supported(sweep: Sweep, chosen: str) -> bool:
    """sweep.uncached_steps_grew's check: the first and last clocked steps' runs, recomputed."""
    runs = sweep.steps.without_cache_runs_s
    last = last_clocked(sweep.steps.without_cache_s)
    ratio = ratio_interval(step_runs(runs, last), step_runs(runs, 0), interval.FAMILY_LEVEL)
    found = interval.ratio_decision(ratio)
    return {"above": "grew", "same": "not_grown", "below": "not_grown"}.get(
        found, "undecided"
    ) == chosen and last > 0


def prefill_twice_supported(sweep: Sweep, chosen: str) -> bool:
    """sweep.prefill's check: each run's two first steps, recomputed at FAMILY_LEVEL."""
    pairs = [
        (uncached[0], cached[0])
        for uncached, cached in zip(sweep.steps.without_cache_runs_s, sweep.steps.with_cache_runs_s)
    ]
    ratio = median_interval([a / b for a, b in pairs if b > 0], interval.FAMILY_LEVEL)
    within = ratio.low >= 1 / (1 + interval.SAME_WITHIN) and ratio.high <= 1 + interval.SAME_WITHIN
    off_one = ratio.low > 1 or ratio.high < 1
    if not ratio.decisive:
        return chosen == "undecided"
    if chosen == "same":
        return within
    if chosen == "apart":
        return off_one
    return not within and not off_one


def recomputed_spreads(sweep: Sweep) -> tuple[float, float]:
    """The largest spread of the runs and of the steps within them, recomputed from the runs
    themselves (the sums' coefficient of variation; within each run, the cached decode steps and
    the uncached steps of one generation around their trend): the spread sentences' checks."""
    unclocked = [
        step for step, seconds in enumerate(sweep.steps.without_cache_s) if seconds is None
    ]
    short = min(sweep.all_steps_up_to, sweep.longest, *unclocked)  # one generation's steps
    cached = sweep.steps.with_cache_runs_s
    uncached = sweep.steps.without_cache_runs_s
    totals = [[sum(v for v in run if v is not None) for run in runs] for runs in (cached, uncached)]
    within = [
        spread.cv_within_runs([run[1:] for run in cached]) if sweep.longest > 1 else 0.0,
        spread.cv_within_runs([run[:short] for run in uncached]),
    ]
    return max(spread.coefficient_of_variation(values) for values in totals), max(within)


CLOSE = 1e-9  # the recorded spreads, recomputed: equal but for rounding


def spreads_within_supported(sweep: Sweep) -> bool:
    """sweep.spreads_within's check: both spreads recomputed (:func:`recomputed_spreads`)."""
    runs, within = recomputed_spreads(sweep)
    return (
        len(sweep.steps.with_cache_runs_s) > 1
        and runs <= sweep.noisy_cv + CLOSE
        and within <= sweep.step_noisy_cv + CLOSE
    )


def runs_over_supported(sweep: Sweep) -> bool:
    """sweep.runs_spread_over's check: the runs' spread recomputed, over its threshold."""
    return recomputed_spreads(sweep)[0] > sweep.noisy_cv - CLOSE


def steps_over_supported(sweep: Sweep) -> bool:
    """sweep.steps_spread_over's check: the steps' spread recomputed, over its threshold."""
    return recomputed_spreads(sweep)[1] > sweep.step_noisy_cv - CLOSE


def two_bands_supported(sweep: Sweep) -> bool:
    """sweep.two_bands's check: each cached step's median over the runs, recomputed from the
    runs, parts into two groups whose intervals separate (records.two_bands_in)."""
    runs = sweep.steps.with_cache_runs_s
    steps = [statistics.median(run[step] for run in runs) for step in range(1, len(runs[0]))]
    return two_bands_in(steps)


def against_time_supported(sweep: Sweep, time: Timing, chosen: str) -> bool:
    """sweep.against_time's check: the speedup's per-round ratios (at the time job's level of
    its looks) and the sweep's per-run ratios at that length, recomputed and reconciled."""
    point = sweep_decide.point_of(sweep, time)
    if point is None:
        return False
    if clocked_among_first(sweep, point.new_tokens) < point.new_tokens:
        return chosen == "estimate"
    steps = sweep.steps
    without = run_sums(steps.without_cache_runs_s, steps.filled_without_cache_s, point.new_tokens)
    with_ = run_sums(steps.with_cache_runs_s, steps.with_cache_s, point.new_tokens)
    level = look_level(time.runs, time.max_runs)
    speedups = paired_ratios(time.without_cache_runs_s, time.with_cache_runs_s)
    found = reconcile(
        median_interval(speedups, level), median_interval(paired_ratios(without, with_))
    )
    return found == chosen


def prefill_against_latency_supported(sweep: Sweep, latency: Latency, chosen: str) -> bool:
    """sweep.prefill_against_latency's check, from both jobs' raw runs."""
    runs = [run.ttft_s for run in latency.with_cache.runs]
    ttfts = [run[0] for run in sweep.steps.with_cache_runs_s]
    return reconcile_runs(runs, ttfts) == chosen


ORACLES = {
    "sweep.longest_estimate": judged_by(longest_estimate_in_runs, "sweep"),
    "sweep.uncached_clocking": judged_by(uncached_clocking_in_runs, "sweep"),
    "sweep.filled_by": judged_by(filled_by_in_runs, "sweep"),
    "sweep.interpolated": judged_by(interpolated_in_runs, "sweep"),
    "sweep.stops_before_longest": judged_by(stops_before_longest_in_runs, "sweep"),
    "sweep.runs_spread_over": judged_by(runs_over_supported, "sweep"),
    "sweep.steps_spread_over": judged_by(steps_over_supported, "sweep"),
    "sweep.two_bands": judged_by(two_bands_supported, "sweep"),
    "sweep.spreads_within": judged_by(spreads_within_supported, "sweep"),
    "sweep.time_against_tokens": judged_by(time_against_tokens_supported, "sweep"),
    "sweep.fixed_share_of": judged_by(fixed_share_supported, "sweep"),
    "sweep.uncached_growth": judged_by(uncached_growth_supported, "sweep"),
    "sweep.prefill_twice": judged_by(prefill_twice_supported, "sweep"),
    "sweep.against_time": judged_by(against_time_supported, "sweep", "time"),
    "sweep.prefill_against_latency": judged_by(
        prefill_against_latency_supported, "sweep", "latency"
    ),
}


def two_bands_in(values: list[float]) -> bool:
    """The two-bands sentences' oracle (sweep's, serve's), from the values themselves: some cut
    of the sorted values where they jump by BAND_GAP, each side at least BAND_SHARE of them and
    holding enough values that its median's interval reaches FAMILY_LEVEL, the two intervals
    apart."""
    ordered = sorted(values)
    for cut in range(1, len(ordered)):
        low, high = ordered[:cut], ordered[cut:]
        if min(len(low), len(high)) < BAND_SHARE * len(ordered) or ordered[cut - 1] <= 0:
            continue
        sides = [median_interval(side) for side in (low, high)]
        apart = all(side.decisive for side in sides) and sides[0].high < sides[1].low
        if apart and ordered[cut] >= BAND_GAP * ordered[cut - 1]:
            return True
    return False
