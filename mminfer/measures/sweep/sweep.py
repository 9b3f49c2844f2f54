"""sweep.json: cost against generation length after the task's prompt. Its record and facts."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from mminfer.records import RunInfo, decided_bands, interval, spread, two_bands_in
from mminfer.records.interval import Interval, median_interval, ratio_interval
from mminfer.records.machine import Contention


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
    with_cache_interval: Interval  # each run's first N cached steps added up: their median
    # and interval (mminfer.records.interval; the runs fixed, so one look at FAMILY_LEVEL)
    without_cache_interval: Interval | None  # the same uncached; a step not clocked counts with
    # its filled time in every run alike (None: one has no time)
    time_ratio_interval: Interval | None  # each run's uncached sum over its cached sum


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
    with_cache_runs_s: list[list[float]]  # every run's every step: the raw runs
    without_cache_runs_s: list[list[float | None]]  # None: a step not clocked
    without_cache_steady: list[bool]  # a clocked uncached step whose runs agree (steady_step):
    # only between two such steps is a step interpolated


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
    ttft_interval: Interval  # the first cached step over the runs
    uncached_first_interval: Interval  # the first uncached step: the same forward of P tokens
    uncached_growth_interval: Interval  # each run's last clocked uncached step over its first
    contention: Contention | None  # during the timed runs (mminfer.records.machine)
    fit: StepFit
    predictions: list[Prediction]
    run: RunInfo

    def point_at(self, new_tokens: int) -> SweepPoint:
        """The length ``new_tokens``'s point (the longest where this sweep has no such length)."""
        found = [point for point in self.points if point.new_tokens == new_tokens]
        return (found or self.points)[-1]

    def longest_fixed_share(self) -> Interval:
        """The fit's fixed cost x N over the cached time measured at the longest length, with
        its interval (:func:`fixed_share`): what sweep.fixed_share prints."""
        longest = self.points[-1]
        return fixed_share(self.fit, longest.new_tokens, longest.with_cache_interval)

    def clocked_counts(self) -> tuple[int, int]:
        """The uncached steps clocked: the first this-many in a row, and this-many more after
        them (spread out), from the steps' medians (:func:`clocking`)."""
        _, first, spread = clocking([seconds is not None for seconds in self.steps.without_cache_s])
        return first, spread

    def last_clocked_step(self) -> int:
        """The last uncached step clocked (0-based)."""
        return last_clocked(self.steps.without_cache_s)

    def cached_bands(self) -> list[dict] | None:
        """The cached decode steps' two bands, where their intervals separate (sweep.two_bands)."""
        return decided_bands(self.steps.with_cache_s[1:])


def clocked_among_first(sweep: Sweep, new_tokens: int) -> int:
    """How many of the first ``new_tokens`` uncached steps were clocked."""
    return sum(seconds is not None for seconds in sweep.steps.without_cache_s[:new_tokens])


# --- the runs: every timed figure's interval comes from them -------------------------------------


def run_sums(
    runs_s: list[list[float | None]], filled: list[float | None], new_tokens: int
) -> list[float] | None:
    """Each run's first ``new_tokens`` steps added up, a step the run did not clock counted with
    its ``filled`` time (the same in every run, so that the interval of a length with filled
    steps spreads only as its clocked steps do: the section calls such a time an estimate, and
    sweep.against_time never weighs it); None where a step has no time at all."""
    sums = []
    for run in runs_s:
        total = 0.0
        for step in range(new_tokens):
            seconds = run[step] if run[step] is not None else filled[step]
            if seconds is None:
                return None
            total += seconds
        sums.append(total)
    return sums


def steady_step(values: list[float], within: float) -> bool:
    """A clocked step whose runs agree: two runs or more, and the interval of their median
    (mminfer.records.interval, at FAMILY_LEVEL) within ``within`` of it on either side. A step
    with one outlier run among few is not steady: no step is interpolated across it."""
    if len(values) < 2:
        return False
    runs = median_interval(values)
    return runs.high - runs.low <= 2 * within * runs.median


def step_runs(runs_s: list[list[float | None]], step: int) -> list[float]:
    """One step's time in every run."""
    return [run[step] for run in runs_s]


def last_clocked(steps: list[float | None]) -> int:
    return max(step for step, seconds in enumerate(steps) if seconds is not None)


# --- what ran: the method sentences, from the steps as clocked -----------------------------------


def clocking(clocked: list[bool]) -> tuple[str, int, int]:
    """How the uncached steps of the longest generation were clocked, from which ran: "all"
    (every step), "spread" (the first ``first`` steps, then ``spread`` more spread out) or
    "first" (the first ``first`` only), with ``first`` and ``spread``."""
    first = 0
    while first < len(clocked) and clocked[first]:
        first += 1
    spread = sum(clocked) - first
    if first == len(clocked):
        return "all", first, 0
    return ("spread" if spread else "first"), first, spread


def uncached_clocking(sweep: Sweep) -> str:
    """sweep.clocking: "all", "spread" or "first" (:func:`clocking`), from the steps' medians (a
    step not clocked is None)."""
    return clocking([seconds is not None for seconds in sweep.steps.without_cache_s])[0]


def clocked_in_runs(sweep: Sweep) -> list[bool]:
    """Each uncached step of the longest generation: whether any run clocked it (the raw runs)."""
    runs = sweep.steps.without_cache_runs_s
    return [any(run[step] is not None for run in runs) for step in range(sweep.longest)]


def uncached_clocking_in_runs(sweep: Sweep, chosen: str) -> bool:
    """sweep.clocking's check: the variant and the counts the words print, from the raw runs."""
    variant, first, spread = clocking(clocked_in_runs(sweep))
    return variant == chosen and (first, spread) == sweep.clocked_counts()


def interpolated(sweep: Sweep) -> bool:
    """sweep.interpolated: some uncached step was filled by a line between clocked steps."""
    return "interpolation" in sweep.steps.without_cache_how


def interpolated_in_runs(sweep: Sweep) -> bool:
    """sweep.interpolated's check: where the fit does not hold, some step no run clocked has a
    time all the same (filled between its clocked neighbours)."""
    filled = sweep.steps.filled_without_cache_s
    clocked = clocked_in_runs(sweep)
    unclocked_with_time = any(
        not ran and seconds is not None for ran, seconds in zip(clocked, filled)
    )
    return not sweep.fit.holds and unclocked_with_time


def filled_by(sweep: Sweep) -> str | None:
    """sweep.filled: how the uncached steps not clocked got their times, from the steps' record:
    "fit" (the fit holds: every one from it), "none" (the fit fails and none was interpolated:
    they have no time); None where every step ran or some were interpolated (sweep.interpolated
    says so)."""
    how = set(sweep.steps.without_cache_how)
    if "fit" in how:
        return "fit"
    if "none" in how and "interpolation" not in how:
        return "none"
    return None


def filled_by_in_runs(sweep: Sweep, chosen: str) -> bool:
    """sweep.filled's check: the steps no run clocked, from the raw runs, and their filled
    times: from the fit where it holds ("fit"), none at all where it fails ("none")."""
    filled = sweep.steps.filled_without_cache_s
    times = [seconds for ran, seconds in zip(clocked_in_runs(sweep), filled) if not ran]
    if chosen == "fit":
        return sweep.fit.holds and bool(times) and None not in times
    return not sweep.fit.holds and bool(times) and all(seconds is None for seconds in times)


def stops_before_longest(sweep: Sweep) -> bool:
    """sweep.last_clocked: the last uncached step clocked lies before the longest's last."""
    return last_clocked(sweep.steps.without_cache_s) != sweep.longest - 1


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


def fixed_share(fit: StepFit, new_tokens: int, with_cache: Interval) -> Interval:
    """N x the fit's fixed cost per cached step over the cached time measured at N: its median
    and interval from the cached time's (a larger time, a smaller share)."""
    fixed_total = new_tokens * fit.fixed_s_with_cache
    return Interval(
        median=fixed_total / with_cache.median,
        low=fixed_total / with_cache.high,
        high=fixed_total / with_cache.low,
        coverage=with_cache.coverage,
        level=with_cache.level,
        runs=with_cache.runs,
    )


# --- the sentences: each predicate reads the stored intervals, each check the raw runs -----------


def time_against_tokens(sweep: Sweep) -> str | None:
    """sweep.time_below_tokens's variant: the longest length's time ratio interval against its
    token ratio, "below", "not_below" (above) or "undecided"; None where it has no time."""
    point = sweep.points[-1]
    if point.time_ratio_interval is None or point.new_tokens < 2:
        return None
    found = interval.against(point.time_ratio_interval, point.token_ratio)
    return {"below": "below", "above": "not_below", "undecided": "undecided"}[found]


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


def fixed_share_of(sweep: Sweep) -> str | None:
    """sweep.fixed_share's variant at the longest length, where the fit holds and the cached
    time's interval decides: "share" (N x fixed at most the fastest run's time, so a share of it
    whatever run is taken) or "exceeds" (more than the slowest run's); None otherwise."""
    point = sweep.points[-1]
    if not sweep.fit.holds or not point.with_cache_interval.decisive:
        return None
    share = fixed_share(sweep.fit, point.new_tokens, point.with_cache_interval)
    if share.high <= 1:
        return "share"
    if share.low > 1:
        return "exceeds"
    return None


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


def uncached_growth(sweep: Sweep) -> str:
    """sweep.uncached_steps_grew's variant: each run's last clocked uncached step over its first
    (the same run, so paired) decided "grew" (above 1), "not_grown" (the same within the noise
    threshold, or below) or "undecided"."""
    found = interval.ratio_decision(sweep.uncached_growth_interval)
    return {"above": "grew", "same": "not_grown", "below": "not_grown"}.get(found, "undecided")


def uncached_growth_supported(sweep: Sweep, chosen: str) -> bool:
    """sweep.uncached_steps_grew's check: the first and last clocked steps' runs, recomputed."""
    runs = sweep.steps.without_cache_runs_s
    last = last_clocked(sweep.steps.without_cache_s)
    ratio = ratio_interval(step_runs(runs, last), step_runs(runs, 0), interval.FAMILY_LEVEL)
    found = interval.ratio_decision(ratio)
    return {"above": "grew", "same": "not_grown", "below": "not_grown"}.get(
        found, "undecided"
    ) == chosen and last > 0


def prefill_twice(sweep: Sweep) -> str:
    """sweep.prefill's variant: the prompt's prefill clocked twice in each run (the cached
    generation's first step, the uncached one's), the same forward of P tokens, their per-run
    ratio "same" within the noise threshold, "apart" (decided off 1) or "undecided"."""
    ratio = ratio_interval(
        step_runs(sweep.steps.without_cache_runs_s, 0),
        step_runs(sweep.steps.with_cache_runs_s, 0),
        sweep.ttft_interval.level,
    )
    found = interval.ratio_decision(ratio)
    return {"same": "same", "above": "apart", "below": "apart"}.get(found, "undecided")


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


def spreads_within(sweep: Sweep) -> bool:
    """sweep.spreads_within: the runs' spread (each run's clocked steps added up) and the steps'
    spread within the runs, as recorded, each at most its threshold, over two runs or more."""
    runs = max(sweep.cv_with_cache, sweep.cv_without_cache) <= sweep.noisy_cv
    steps = max(sweep.cv_with_cache_within_runs, sweep.cv_without_cache_within_runs)
    return sweep.runs > 1 and runs and steps <= sweep.step_noisy_cv


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


def longest_estimate(sweep: Sweep) -> bool:
    """sweep.longest_estimate: the longest length's uncached time an estimate (some of its
    steps filled, not clocked)."""
    longest = sweep.points[-1]
    return clocked_among_first(sweep, longest.new_tokens) < longest.new_tokens


def runs_spread_over(sweep: Sweep) -> bool:
    """sweep.runs_spread_over: the runs' spread (each run's clocked steps added up), as
    recorded, over noisy_cv on some side."""
    return max(sweep.cv_with_cache, sweep.cv_without_cache) > sweep.noisy_cv


def steps_spread_over(sweep: Sweep) -> bool:
    """sweep.steps_spread_over: the steps' spread within a run, as recorded, over step_noisy_cv
    on some side."""
    within = (sweep.cv_with_cache_within_runs, sweep.cv_without_cache_within_runs)
    return max(within) > sweep.step_noisy_cv


def two_bands(sweep: Sweep) -> bool:
    """sweep.two_bands: the cached steps after the prefill part into two bands whose medians'
    intervals separate (records.decided_bands)."""
    return sweep.cached_bands() is not None


def two_bands_supported(sweep: Sweep) -> bool:
    """sweep.two_bands's check: each cached step's median over the runs, recomputed from the
    runs, parts into two groups whose intervals separate (records.two_bands_in)."""
    runs = sweep.steps.with_cache_runs_s
    steps = [statistics.median(run[step] for run in runs) for step in range(1, len(runs[0]))]
    return two_bands_in(steps)


def sweep_rows(sweep: Sweep) -> list[dict]:
    """The table's rows: each length, and how its uncached time is marked.

    ``mark`` before the time: "≈" where some steps came from the fit; ``after`` it: "†" where
    some were interpolated between steady clocked steps; ``hidden``: no time could be filled in
    (—, not measured).
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
                "mark": "≈" if how == "fit" else "",
                "after": "†" if how == "interpolation" else "",
                "fed_from_formula": point.fed_without_cache is None,
            }
        )
    return rows
