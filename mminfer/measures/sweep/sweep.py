"""sweep.json: cost against generation length after the task's prompt. Its record and facts."""

from __future__ import annotations

import math
from dataclasses import dataclass

from mminfer.records import Glance, RunInfo, agree, bands
from mminfer.records.claims import Claim, claim


@dataclass
class SweepPoint:
    """One generation length N, read off the first N steps of the clocked generations."""

    new_tokens: int
    fed_with_cache: int
    fed_without_cache: int | None  # None: not every uncached step ran (see clocked_without_cache)
    formula_with_cache: int
    formula_without_cache: int
    clocked_with_cache: int  # of the first N steps, those clocked (each one forward call)
    clocked_without_cache: int
    with_cache_s: float
    without_cache_s: float | None  # clocked steps plus the others as filled (None: one has no time)
    without_cache_from: str  # the first N uncached steps: "clocked", or the others from "fit",
    # "interpolation" (between clocked steps) or "none"
    token_ratio: float
    time_ratio: float | None
    decode_s_per_token: float | None  # the mean cached step after the prefill


@dataclass
class SweepSteps:
    """Every step of the longest generation per method, clocked and as the fit gives it.

    A step that was not clocked is None. A clocked step's time is the median over the runs, its
    low and high the fastest and slowest run. ``filled_without_cache_s`` is every uncached step's
    time the lengths add up: clocked, else the fit's where the fit holds, else interpolated
    between the clocked steps either side (None past the last clocked step); ``without_cache_how``
    says which, step by step ("clocked", "fit", "interpolation", "none").
    """

    with_cache_s: list[float]
    fed_with_cache: list[int]
    without_cache_s: list[float | None]
    fed_without_cache: list[int | None]
    fitted_with_cache_s: list[float]
    fitted_without_cache_s: list[float]
    with_cache_low_s: list[float]
    with_cache_high_s: list[float]
    without_cache_low_s: list[float | None]
    without_cache_high_s: list[float | None]
    filled_without_cache_s: list[float | None]
    without_cache_how: list[str]


@dataclass
class StepFit:
    """The cost model fitted over every step of both methods."""

    model: str
    method: str
    fixed_s_with_cache: float
    fixed_s_without_cache: float
    per_token_s: float
    per_pair_s: float
    held_at_zero: list[str]
    r2: float | None
    median_relative_residual: dict[str, float]  # per method
    holds: bool
    measured_new_tokens: list[int]
    measured_context: list[int]
    steps: int


@dataclass
class Prediction:
    """The fit's times and ratios at one length, measured or extrapolated."""

    new_tokens: int
    measured: bool
    with_cache_s: float
    without_cache_s: float
    time_ratio: float | None
    token_ratio: float
    fixed_share_with_cache: float | None


@dataclass
class Sweep:
    """sweep.json: cost against generation length after the task's prompt."""

    prompt_len: int
    lengths: list[int]
    longest: int
    warmup: int
    runs: int
    all_steps_up_to: int  # without the cache, every step of the first this-many tokens is clocked
    spread_steps: int  # and this many more, spread evenly up to the longest
    how: str
    threads: int
    load_before: list[float] | None
    load_after: list[float] | None
    cv_with_cache: float  # coefficient of variation of the runs (each run: its clocked steps' sum)
    cv_without_cache: float
    cv_with_cache_within_runs: float  # the steps' spread within a run around their trend
    cv_without_cache_within_runs: float
    noisy_cv: float  # the threshold of the runs' spread
    step_noisy_cv: float  # the threshold of the steps' spread within a run (spread.STEP_NOISY_CV)
    clock: str  # the clock the runs were read by: "perf_counter", or the tests' jitter
    doubts: list[str]  # see mminfer.measures.sweep.measure.spread_doubts
    verdict: str  # "ok", "noisy" or "untrusted" (mminfer.records.spread.verdict_of)
    points: list[SweepPoint]
    steps: SweepSteps
    uncached_ids_match: bool  # every clocked uncached step picked the cached generation's token
    ttft_s: float
    decode_s_per_token: float | None
    fit: StepFit
    predictions: list[Prediction]
    run: RunInfo


SWEEP_RUN_DOUBTS = ("with_cache_spread", "without_cache_spread")  # between the runs
SWEEP_STEP_DOUBTS = ("with_cache_spread_within_runs", "without_cache_spread_within_runs")


def sweep_facts(sweep: Sweep) -> dict:
    """sweep.json's facts: counts, the verdict's parts, the fit, the rows of its table, the two
    bands of a noisy run's cached steps and the prefill measured twice here (the first step both
    ways). How time.json's speedup relates to it is the report's join (mminfer.report.joins):
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
    all_steps = min(sweep.all_steps_up_to, sweep.longest)
    clocked = sum(seconds is not None for seconds in steps_without)
    last_step = max(step for step, seconds in enumerate(steps_without) if seconds is not None)
    last_clocked = steps_without[last_step]
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
    return (
        vars(sweep)
        | {
            "counts_match": counts_match,
            "longest_point": longest,
            "first_step_without_cache_s": steps_without[0],
            "last_step_without_cache_s": last_clocked,
            "last_clocked_step": last_step,
            "uncached_steps_grow": last_clocked > steps_without[0],
            "uncached_all_steps": all_steps,
            "uncached_spread_clocked": clocked - all_steps,
            "partly_fitted": any(point.fed_without_cache is None for point in points),
            "interpolated": any(point.without_cache_from == "interpolation" for point in points),
            "unfilled": any(point.without_cache_from == "none" for point in points),
            "single_run": "single_run" in sweep.doubts,
            "runs_spread": any(doubt in sweep.doubts for doubt in SWEEP_RUN_DOUBTS),
            "steps_spread": any(doubt in sweep.doubts for doubt in SWEEP_STEP_DOUBTS),
            "cached_step_s": cached_step_s,
            "cache_not_faster": "cache_not_faster"
            in sweep.doubts,  # decided in sweep.spread_doubts
            "fit_holds": fit.holds,
            "fixed_share_at_longest": None
            if at_longest is None
            else at_longest.fixed_share_with_cache,
            "fixed_in_tokens": fixed_in_tokens,  # the fixed cost of a cached step, in tokens' worth
            "extrapolated": None if furthest.measured else furthest,
            "rows": sweep_rows(sweep),
            "last_step_before_longest": last_step != sweep.longest - 1,
            "time_below_tokens": (
                longest.time_ratio is not None and longest.time_ratio < longest.token_ratio
            ),
            "bands": bands(steps_with[1:]),
            "verdict_claims": verdict_claims(sweep),
            "bands_claim": bands_claim(sweep),
            "prefill_twice": prefill_twice(sweep),
            "against_time": None,
            "longest_estimated": longest.without_cache_from != "clocked",
            "length_claims": length_claims(sweep),
            "steps_claims": steps_claims(sweep),
        }
    )


def clocked_among_first(sweep: Sweep, new_tokens: int) -> int:
    """How many of the first ``new_tokens`` uncached steps were clocked."""
    return sum(seconds is not None for seconds in sweep.steps.without_cache_s[:new_tokens])


def fixed_share_claims(fit: StepFit, point: SweepPoint, prefix_ok: bool = True) -> dict:
    """The share of the cached path's measured time at ``point`` that the fit's fixed cost per
    step takes: N steps x fixed_s_with_cache over the time measured (not the fit's own
    prediction). ``share``: it holds (the fit holds and N x fixed is at most the time measured);
    ``exceeds``: the fit holds but N x fixed passes the time measured, so no share is said."""
    fixed_total = point.new_tokens * fit.fixed_s_with_cache
    share = fixed_total / point.with_cache_s if point.with_cache_s > 0 else math.inf
    about = {
        "new_tokens": point.new_tokens,
        "share": share,
        "fixed_s": fit.fixed_s_with_cache,
        "fixed_total_s": fixed_total,
        "measured_s": point.with_cache_s,
    }
    return {
        "share": claim("sweep.fixed_share", prefix_ok and fit.holds and share <= 1, **about),
        "exceeds": claim("sweep.fixed_exceeds", prefix_ok and fit.holds and share > 1, **about),
    }


def length_claims(sweep: Sweep) -> dict[str, Claim]:
    """The lesson's relations at the longest length: the time ratio below the token ratio or not,
    the fixed cost's share of the cached path's measured time, and whether the longest length's
    uncached time is an estimate (some of its steps filled, not clocked)."""
    longest = sweep.points[-1]
    ratio = longest.time_ratio
    about = {
        "new_tokens": longest.new_tokens,
        "time_ratio": ratio,
        "token_ratio": longest.token_ratio,
    }
    clocked = clocked_among_first(sweep, longest.new_tokens)
    return {
        "below": claim(
            "sweep.time_below_tokens", ratio is not None and ratio < longest.token_ratio, **about
        ),
        "not_below": claim(
            "sweep.time_not_below_tokens",
            ratio is not None and ratio >= longest.token_ratio,
            **about,
        ),
        "estimate": claim(
            "sweep.longest_estimate",
            clocked < longest.new_tokens,
            new_tokens=longest.new_tokens,
            clocked=clocked,
        ),
        **fixed_share_claims(sweep.fit, longest),
    }


def steps_claims(sweep: Sweep) -> dict[str, Claim]:
    """The uncached steps from the first to the last clocked: grew, or did not."""
    steps = sweep.steps.without_cache_s
    last = max(step for step, seconds in enumerate(steps) if seconds is not None)
    about = {"first_s": steps[0], "last_s": steps[last], "last_step": last}
    return {
        "grew": claim("sweep.uncached_steps_grew", steps[last] > steps[0], **about),
        "flat": claim("sweep.uncached_steps_not_grown", steps[last] <= steps[0], **about),
    }


def verdict_claims(sweep: Sweep) -> dict[str, Claim]:
    """The verdict's relations to its thresholds: every spread at most its threshold
    (``within``), the runs' spread over noisy_cv on some side (``runs_over``), the steps' spread
    within a run over step_noisy_cv on some side (``steps_over``), and ``interpolation_trusted``:
    interpolated lengths, the uncached runs and steps both within their thresholds."""
    runs = (sweep.cv_with_cache, sweep.cv_without_cache)
    within_runs = (sweep.cv_with_cache_within_runs, sweep.cv_without_cache_within_runs)
    about = {
        "cv_with_cache": sweep.cv_with_cache,
        "cv_without_cache": sweep.cv_without_cache,
        "cv_with_cache_within_runs": sweep.cv_with_cache_within_runs,
        "cv_without_cache_within_runs": sweep.cv_without_cache_within_runs,
        "noisy_cv": sweep.noisy_cv,
        "step_noisy_cv": sweep.step_noisy_cv,
    }
    runs_within = max(runs) <= sweep.noisy_cv
    steps_within = max(within_runs) <= sweep.step_noisy_cv
    interpolated = any(point.without_cache_from == "interpolation" for point in sweep.points)
    uncached_within = (
        sweep.cv_without_cache <= sweep.noisy_cv
        and sweep.cv_without_cache_within_runs <= sweep.step_noisy_cv
    )
    return {
        "within": claim("sweep.spreads_within", runs_within and steps_within, **about),
        "runs_over": claim("sweep.runs_spread_over", not runs_within, **about),
        "steps_over": claim("sweep.steps_spread_over", not steps_within, **about),
        "interpolation_trusted": claim(
            "sweep.interpolation_trusted", interpolated and uncached_within, **about
        ),
    }


def bands_claim(sweep: Sweep) -> Claim:
    """ "캐시 경로의 디코드 한 단계는 두 무리로 갈렸다": the cached steps after the prefill part
    into two bands (records.bands), each band's median and share cited."""
    parts = bands(sweep.steps.with_cache_s[1:])
    return claim("sweep.two_bands", parts is not None, bands=parts or [])


def prefill_twice(sweep: Sweep) -> dict:
    """The prefill of the prompt measured twice in one run: the cached generation's first step
    (ttft_s) and the uncached one's first step, the same forward of P tokens, their runs' ranges
    judged by records.agree (within the sweep's noisy_cv): a claim for each of its three
    findings."""
    steps = sweep.steps
    cached = (steps.with_cache_low_s[0], steps.with_cache_high_s[0])
    uncached = (steps.without_cache_low_s[0], steps.without_cache_high_s[0])
    found = agree(cached, uncached, sweep.noisy_cv)
    about = {
        "ttft_s": sweep.ttft_s,
        "uncached_first_s": steps.without_cache_s[0],
        "relative": sweep.noisy_cv,
    }
    return about | {
        "meet": claim("sweep.prefill_meet", found == "meet", **about),
        "within_noise": claim("sweep.prefill_within_noise", found == "within_noise", **about),
        "apart": claim("sweep.prefill_apart", found == "apart", **about),
    }


def ratio_range(sweep: Sweep, new_tokens: int) -> tuple[float, float]:
    """The time ratio's range over the runs at ``new_tokens``: the uncached steps' fastest runs
    over the cached steps' slowest, and the other way round (every step clocked)."""
    steps = sweep.steps
    with_low = sum(steps.with_cache_low_s[:new_tokens])
    with_high = sum(steps.with_cache_high_s[:new_tokens])
    without_low = sum(steps.without_cache_low_s[:new_tokens])
    without_high = sum(steps.without_cache_high_s[:new_tokens])
    return without_low / with_high, without_high / with_low


def sweep_rows(sweep: Sweep) -> list[dict]:
    """The table's rows: each length, and how its uncached time is marked.

    ``mark`` before the time: "≈" where some steps were filled (an estimate); ``after`` it: "†"
    where they were interpolated between clocked steps; ``hidden``: no time could be filled in (—).
    ``fed_from_formula``: not every uncached step ran, so fed_without_cache is the formula's
    value (formula_without_cache, marked), not a count.
    """
    rows = []
    for point in sweep.points:
        how = point.without_cache_from
        rows.append(
            {
                "point": point,
                "hidden": how == "none",
                "mark": "≈" if how in ("fit", "interpolation") else "",
                "after": "†" if how == "interpolation" else "",
                "fed_from_formula": point.fed_without_cache is None,
            }
        )
    return rows


def sweep_glance(sweep: Sweep) -> Glance:
    """## 길이에 따른 비용's row: the ratios at the longest length; the lesson "time_below"
    (time falls short of the token ratio), "time_not_below" or "not_faster" (the cache was not
    faster: nothing to learn from the times)."""
    facts = sweep_facts(sweep)
    if facts["cache_not_faster"]:
        lesson = "not_faster"
    elif facts["time_below_tokens"]:
        lesson = "time_below"
    else:
        lesson = "time_not_below"
    return Glance(
        lesson=lesson, verdict=sweep.verdict, terms=("token_ratio", "speedup", "fit", "decode_step")
    )
