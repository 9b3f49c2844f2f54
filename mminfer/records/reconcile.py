"""Two numbers of one quantity: the same prefill, or the same P and N, timed by two jobs.

time.json's speedup and sweep.json's time ratio at the same P and N; sweep.json's first cached
step, serve.json's B = 1 prefill and latency.json's time to first token, each the forward of the
same P tokens: each job gives its runs' interval (mminfer.records.interval). Two independent
measurements are judged by :func:`mminfer.records.interval.order`: "overlap" where their
intervals share a value (nothing to reconcile: overlap proves no equality, and the report says
only that they overlap), "apart" where both are decisive and disjoint, "undecided" where one is
too wide for its level (too few runs). Where they are apart the report says which is which and
why it may be (the report sections' WHY words): the contention each job measured during its own
runs, the threads, and the difference of their methods, never only the two numbers side by side.

Pure Python, no torch: the report and the checker import it.
"""

from __future__ import annotations

from mminfer.records.interval import FAMILY_LEVEL, Interval, median_interval, order


def reconcile(one: Interval, other: Interval) -> str:
    """Two independent timings of one quantity: "overlap", "apart" or "undecided" (see the
    module's docstring)."""
    found = order(one, other)
    if found in ("above", "below"):
        return "apart"
    if one.decisive and other.decisive:
        return "overlap"
    return "undecided"


def reconcile_runs(one: list[float], other: list[float], level: float = FAMILY_LEVEL) -> str:
    """:func:`reconcile` recomputed from each job's raw runs (an oracle's re-derivation)."""
    return reconcile(median_interval(one, level), median_interval(other, level))
