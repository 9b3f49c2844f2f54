"""## 길이에 따른 비용: sweep.json's facts and glance row, and its joins.

Beside time.json (the sweep's time ratio at the task's N against the task's speedup) and
latency.json (the sweep's prefill against the streamer's first token); a busy machine is named as
the cause of a difference only where one side alone ran busy (mminfer.report.busy).
"""

from __future__ import annotations

from mminfer.measures.sweep import decide
from mminfer.measures.sweep.sweep import Sweep, sweep_rows
from mminfer.measures.time.time import Timing
from mminfer.records import Glance
from mminfer.report.sections.sweep import joins

SWEEP_RUN_DOUBTS = ("with_cache_spread", "without_cache_spread")  # between the runs


SWEEP_STEP_DOUBTS = ("with_cache_spread_within_runs", "without_cache_spread_within_runs")


def sweep_facts(sweep: Sweep) -> dict:
    """sweep.json's facts: counts, the verdict's parts, the fit, the rows of its table, the two
    bands of a noisy run's cached steps and the prefill measured twice here (the first step both
    ways). How time.json's speedup relates to it is this module's join:
    ``against_time`` None here."""
    points, fit = sweep.points, sweep.fit
    longest = points[-1]
    steps_with = sweep.steps.with_cache_s
    steps_without = sweep.steps.without_cache_s
    at_longest = None
    for row in sweep.predictions:
        if row.new_tokens == sweep.longest:
            at_longest = row
    furthest = sweep.predictions[-1]
    last_step = sweep.last_clocked_step()
    counts_match = True
    for point in points:
        counts_match &= point.fed_with_cache == point.formula_with_cache
        if point.fed_without_cache is not None:
            counts_match &= point.fed_without_cache == point.formula_without_cache
    # a cached step after the prefill: the mean over all of them (sweep.py), not one noisy step
    if sweep.decode_s_per_token is None:
        cached_step_s = steps_with[0]
    else:
        cached_step_s = sweep.decode_s_per_token
    if fit.per_token_s > 0:
        fixed_in_tokens = fit.fixed_s_with_cache / fit.per_token_s
    else:
        fixed_in_tokens = None
    return vars(sweep) | {
        "counts_match": counts_match,
        "longest_point": longest,
        "first_step_without_cache_s": steps_without[0],
        "last_step_without_cache_s": steps_without[last_step],
        "partly_fitted": any(point.fed_without_cache is None for point in points),
        "interpolated": decide.interpolated(sweep),
        "fitted": any(point.without_cache_from == "fit" for point in points),
        "unfilled": any(point.without_cache_from == "none" for point in points),
        "single_run": "single_run" in sweep.doubts,
        "runs_spread": any(doubt in sweep.doubts for doubt in SWEEP_RUN_DOUBTS),
        "steps_spread": any(doubt in sweep.doubts for doubt in SWEEP_STEP_DOUBTS),
        "cached_step_s": cached_step_s,
        "cache_not_faster": "cache_not_faster" in sweep.doubts,  # decided in sweep.spread_doubts
        "fit_holds": fit.holds,
        "fixed_share_at_longest": None if at_longest is None else at_longest.fixed_share_with_cache,
        "fixed_in_tokens": fixed_in_tokens,  # the fixed cost of a cached step, in tokens' worth
        "fixed_ms_with_cache": 1000 * fit.fixed_s_with_cache,  # the fit's intercept, in ms
        "extrapolated": None if furthest.measured else furthest,
        "rows": sweep_rows(sweep),
        "time_against_tokens": decide.time_against_tokens(sweep),
        "against_time": None,
        "longest_estimated": longest.without_cache_from != "clocked",
        "estimate": decide.longest_estimate(sweep),
    }


def sweep_glance(sweep: Sweep) -> Glance:
    """## 길이에 따른 비용's row: the ratios at the longest length; the lesson "time_below"
    (the time ratio's interval below the token ratio), "time_not_below", "undecided" (the runs
    cannot say), "unknown" (no time) or "not_faster" (the cache was not faster: nothing to learn
    from the times)."""
    facts = sweep_facts(sweep)
    found = decide.time_against_tokens(sweep)
    if facts["cache_not_faster"]:
        lesson = "not_faster"
    elif found is None:
        lesson = "unknown"
    else:
        lesson = {"below": "time_below", "not_below": "time_not_below"}.get(found, "undecided")
    return Glance(
        lesson=lesson, verdict=sweep.verdict, terms=("token_ratio", "speedup", "fit", "decode_step")
    )


def sweep_time_facts(sweep: Sweep, time: Timing | None = None) -> dict:
    """sweep.json's facts (mminfer.measures.sweep.sweep.sweep_facts) and, with time.json, how
    the speedup at time.json's length relates to the sweep's time ratio (:func:`against_time`,
    sweep.against_time's variant, joins.py)."""
    return sweep_facts(sweep) | {"against_time": joins.against_time(sweep, time)}
