"""sweep.json beside time.json and latency.json: the speedup, the two prefills, the loads.

The load is named as a cause only where one side alone ran busy. A join of two rules' records
lives in its report section (.importlinter); pure Python, no torch.
"""

from __future__ import annotations

from mminfer.measures.sweep.sweep import Sweep, SweepPoint, clocked_among_first
from mminfer.measures.time.latency import Latency
from mminfer.measures.time.time import Timing
from mminfer.records.interval import median_interval
from mminfer.records.machine import busy_alone
from mminfer.records.reconcile import reconcile


def load_against_time(time: Timing | None, sweep: Sweep) -> str | None:
    """sweep.load_against_time: "time" or "sweep", the one of the two that alone ran busy (a
    load named as the cause of their difference); None where both or neither did."""
    return busy_alone(time, sweep, ("time", "sweep"))


def load_against_latency(latency: Latency | None, sweep: Sweep) -> str | None:
    """sweep.load_against_latency: "latency" or "sweep", the one that alone ran busy."""
    return busy_alone(latency, sweep, ("latency", "sweep"))


def point_of(sweep: Sweep, time: Timing | None) -> SweepPoint | None:
    """The sweep's length that is time.json's, after the same prompt, with a time ratio."""
    if time is None or time.prompt_len != sweep.prompt_len:
        return None
    point = None
    for candidate in sweep.points:
        if candidate.new_tokens == time.new_tokens and candidate.time_ratio is not None:
            point = candidate
    return point


def against_time(sweep: Sweep, time: Timing | None) -> str | None:
    """time.json's speedup beside the time ratio this sweep gives at the same prompt and length
    (mminfer.records.reconcile): "overlap", "apart" (which is which and why: the contention
    each job measured, the threads, the methods), "undecided" (an interval short of its level);
    "estimate" where some of the sweep's uncached steps at that length were filled in (fit,
    interpolation), never judged against the speedup. None: no length of this sweep is
    time.json's."""
    point = point_of(sweep, time)
    if point is None:
        return None
    if clocked_among_first(sweep, point.new_tokens) < point.new_tokens:
        return "estimate"
    return reconcile(time.speedup_interval, point.time_ratio_interval)


def prefill_against_latency(sweep: Sweep, latency: Latency | None) -> str | None:
    """sweep.prefill_against_latency: sweep.json's time to first token (the cached generation's
    first forward) beside latency.json's (the streamer's first token of time.json's cached runs),
    the same P tokens prefilled (mminfer.records.reconcile); None where not the same prompt."""
    if latency is None or latency.prompt_len != sweep.prompt_len:
        return None
    runs = [run.ttft_s for run in latency.with_cache.runs]
    return reconcile(median_interval(runs), sweep.ttft_interval)
