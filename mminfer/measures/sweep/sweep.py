"""sweep.json: cost against generation length after the task's prompt. Its record and facts."""

from __future__ import annotations

from dataclasses import dataclass

from mminfer.records import RunInfo
from mminfer.records.interval import Interval, median_interval
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
