"""latency.json beside sweep.json: where the uncached step passes the TPOT limit.

A join of two rules' records lives in its report section (.importlinter); pure Python, no torch.
"""

from __future__ import annotations

from mminfer.measures.sweep.sweep import Sweep
from mminfer.measures.time.latency import Latency
from mminfer.records import interval
from mminfer.records.interval import against, median_interval


def crossing_of(latency: Latency, sweep: Sweep | None) -> dict | None:
    """Where the sweep's clocked uncached steps pass the TPOT limit, each step's interval from its
    runs (one look, FAMILY_LEVEL) against the limit. ``variant``: "crosses" (a step wholly above
    it, every clocked step before it wholly below: ``new_tokens``, ``context`` and ``step_s`` are
    that step's), "never" (every clocked step wholly below: the last clocked one's), "undecided"
    (the first step not wholly below is not wholly above either: that step's). None without a
    trusted sweep or a clocked uncached step."""
    if sweep is None or sweep.verdict == "untrusted":
        return None
    clocked = [
        (step, seconds)
        for step, seconds in enumerate(sweep.steps.without_cache_s)
        if seconds is not None
    ]
    if not clocked:
        return None
    variant, (step, seconds) = "never", clocked[-1]
    for candidate, median in clocked:
        runs = [run[candidate] for run in sweep.steps.without_cache_runs_s]
        side = against(median_interval(runs, interval.FAMILY_LEVEL), latency.tpot_limit_s)
        if side != "below":
            variant = "crosses" if side == "above" else "undecided"
            step, seconds = candidate, median
            break
    return {
        "variant": variant,
        "new_tokens": step + 1,
        "context": sweep.prompt_len + step,
        "step_s": seconds,
    }


def sweep_crossing(latency: Latency, sweep: Sweep | None) -> str | None:
    """latency.sweep_crosses: :func:`crossing_of`'s variant."""
    found = crossing_of(latency, sweep)
    return None if found is None else found["variant"]
