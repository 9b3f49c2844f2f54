"""What sweep.json decides: how the uncached steps were clocked, the ratios at the longest length,
the spreads and the bands (its joins with time.json and latency.json are its report section's).

Each function takes the record and returns a variant word or
whether its words hold, from the runs' intervals (mminfer.records.interval). The report's
sentences, glance row, pictures and the checker call these. Pure Python, no torch.
"""

from __future__ import annotations

from mminfer.measures.sweep.sweep import (
    Sweep,
    clocked_among_first,
    clocking,
    fixed_share,
    last_clocked,
    step_runs,
)
from mminfer.records import decided_bands, interval
from mminfer.records.interval import ratio_interval


def uncached_clocking(sweep: Sweep) -> str:
    """sweep.clocking: "all", "spread" or "first" (:func:`clocking`), from the steps' medians (a
    step not clocked is None)."""
    return clocking([seconds is not None for seconds in sweep.steps.without_cache_s])[0]


def interpolated(sweep: Sweep) -> bool:
    """sweep.interpolated: some uncached step was filled by a line between clocked steps."""
    return "interpolation" in sweep.steps.without_cache_how


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


def stops_before_longest(sweep: Sweep) -> bool:
    """sweep.last_clocked: the last uncached step clocked lies before the longest's last."""
    return last_clocked(sweep.steps.without_cache_s) != sweep.longest - 1


def longest_estimate(sweep: Sweep) -> bool:
    """sweep.longest_estimate: the longest length's uncached time an estimate (some of its
    steps filled, not clocked)."""
    longest = sweep.points[-1]
    return clocked_among_first(sweep, longest.new_tokens) < longest.new_tokens


def time_against_tokens(sweep: Sweep) -> str | None:
    """sweep.time_below_tokens's variant: the longest length's time ratio interval against its
    token ratio, "below", "not_below" (above) or "undecided"; None where it has no time."""
    point = sweep.points[-1]
    if point.time_ratio_interval is None or point.new_tokens < 2:
        return None
    found = interval.against(point.time_ratio_interval, point.token_ratio)
    return {"below": "below", "above": "not_below", "undecided": "undecided"}[found]


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


def uncached_growth(sweep: Sweep) -> str:
    """sweep.uncached_steps_grew's variant: each run's last clocked uncached step over its first
    (the same run, so paired) decided "grew" (above 1), "not_grown" (the same within the noise
    threshold, or below) or "undecided"."""
    found = interval.ratio_decision(sweep.uncached_growth_interval)
    return {"above": "grew", "same": "not_grown", "below": "not_grown"}.get(found, "undecided")


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


def spreads_within(sweep: Sweep) -> bool:
    """sweep.spreads_within: the runs' spread (each run's clocked steps added up) and the steps'
    spread within the runs, as recorded, each at most its threshold, over two runs or more."""
    runs = max(sweep.cv_with_cache, sweep.cv_without_cache) <= sweep.noisy_cv
    steps = max(sweep.cv_with_cache_within_runs, sweep.cv_without_cache_within_runs)
    return sweep.runs > 1 and runs and steps <= sweep.step_noisy_cv


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
    return cached_bands(sweep) is not None


def cached_bands(sweep: Sweep) -> list[dict] | None:
    """The cached decode steps' two bands, where their intervals separate (sweep.two_bands)."""
    return decided_bands(sweep.steps.with_cache_s[1:])
