"""The oracles of latency.json's sentences: its own from each run's stamps alone ([0] the
prompt's put, [1] the first new token's, [-1] the last's), never from the record's per-run
summaries that mminfer.measures.time.decide reads; beside sweep.json, from sweep.json's raw steps.
``ORACLES[key](records, about)``: tests/oracles.py merges them."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping

from oracles_timing import judged_by

from mminfer.measures.time.decide import AGREES, COST, PAIRED, SPEED, decided, level_of, paths
from mminfer.measures.time.latency import Latency
from mminfer.measures.time.time import Timing
from mminfer.records import interval


def clocked_uncached(records) -> list[tuple[int, float]]:
    return [
        (step, seconds)
        for step, seconds in enumerate(records["sweep"].steps.without_cache_s)
        if seconds is not None
    ]


def side(records, step: int) -> str:
    """The step's runs against the TPOT limit: "above" or "below" only where the order-statistic
    interval [x(k), x(n+1-k)] covering the median with at least 90 % lies wholly on one side."""
    runs = sorted(run[step] for run in records["sweep"].steps.without_cache_runs_s)
    n, limit = len(runs), records["latency"].tpot_limit_s
    for k in range(n // 2, 0, -1):  # the narrowest interval that still covers 90 %
        miss = sum(math.comb(n, i) for i in range(k)) / 2**n
        if n > 1 and 1 - 2 * miss >= 0.9 - 1e-12:
            low, high = runs[k - 1], runs[n - k]
            return "above" if low > limit else "below" if high < limit else "undecided"
    return "undecided"


def sweep_crosses(records, about) -> bool:
    """ "캐시 없는 단계는 … TPOT 한계를 처음 넘었다" / "… 넘지 않았다" / "… 가를 수 없다": the first
    clocked uncached step not wholly below the limit lies wholly above it, across it, or none."""
    sides = [side(records, step) for step, _ in clocked_uncached(records)]
    found = next((found for found in sides if found != "below"), "never")
    return {"above": "crosses", "undecided": "undecided", "never": "never"}[found] == about[
        "variant"
    ]


def limits_in_runs(latency: Latency, time: Timing, name: str) -> str:
    """:func:`limits` recomputed from the runs' stamps (TTFT the first new token's put, TPOT the
    rest over N - 1), their intervals at the time job's per-look level."""
    level = interval.look_level(time.runs, time.max_runs)
    runs = paths(latency)[name].runs
    ttft = [run.stamps_s[1] for run in runs]
    tpot = [(run.stamps_s[-1] - run.stamps_s[1]) / max(len(run.stamps_s) - 2, 1) for run in runs]
    found = {
        interval.against(interval.median_interval(ttft, level), latency.ttft_limit_s),
        interval.against(interval.median_interval(tpot, level), latency.tpot_limit_s),
    }
    if found == {"below"}:
        return "within"
    return "over" if "above" in found else "undecided"


def lesson_in_runs(latency: Latency, time: Timing, chosen: str) -> bool:
    """latency.lesson's check: the paths' limits recomputed from the runs give the lesson."""
    if latency.verdict == "untrusted":
        return chosen == "untrusted"
    cached = limits_in_runs(latency, time, "with_cache")
    uncached = limits_in_runs(latency, time, "without_cache")
    if cached == "within":
        found = {"within": "both_within", "over": "cached_within"}.get(uncached, "undecided")
    else:
        found = "over" if cached == "over" else "undecided"
    return found == chosen


def gap_in_runs(latency: Latency, time: Timing, chosen: str) -> bool:
    """latency.uncached_gap's check, apart from its predicate: "grows" only where every run's
    last-quarter median gap over its first's, taken as an interval at the level of the time
    job's looks, lies above 1; "undecided" only where it does not."""
    k = max(1, (latency.new_tokens - 1) // 4)
    ratios = []
    for run in latency.without_cache.runs:
        gaps = [b - a for a, b in zip(run.stamps_s[1:-1], run.stamps_s[2:])]
        first = statistics.median(gaps[:k])
        ratios.append(statistics.median(gaps[-k:]) / first if first > 0 else math.inf)
    found = interval.median_interval(ratios, interval.look_level(time.runs, time.max_runs))
    grows = found.decisive and found.low > 1.0
    return chosen == ("grows" if grows else "undecided")


def ttft_paths_in_runs(latency: Latency, time: Timing | None, chosen: str) -> bool:
    """latency.ttft_paths's check: each round's first-token stamps, uncached over cached."""
    pairs = zip(latency.without_cache.runs, latency.with_cache.runs, strict=True)
    return PAIRED[decided([a.stamps_s[1] / b.stamps_s[1] for a, b in pairs], time)] == chosen


def tpot_agrees_in_runs(latency: Latency, time: Timing, chosen: str) -> bool:
    """latency.tpot_agrees's check: each run's first to last new token's stamps over time.json's
    run less its first token's stamp (the N - 1 tokens after the first, both ways)."""
    runs = zip(time.with_cache_runs_s, latency.with_cache.runs, strict=True)
    ratios = [(run.stamps_s[-1] - run.stamps_s[1]) / (s - run.stamps_s[1]) for s, run in runs]
    return AGREES[decided(ratios, time)] == chosen


def speed_in_runs(latency: Latency, time: Timing | None, chosen: str) -> bool:
    """latency.speed's check: each run's n over its n-th token's stamp, times its gaps' mean
    from its stamps (first to last new token over N - 1)."""
    n = latency.with_cache.speed[0].n
    ratios = [
        n / run.stamps_s[n] * (run.stamps_s[-1] - run.stamps_s[1]) / (len(run.stamps_s) - 2)
        for run in latency.with_cache.runs
    ]
    found = interval.median_interval(ratios, level_of(time))
    side = "undecided"
    if found.decisive and found.high < 1.0:
        side = "below"
    elif found.decisive and found.low > 1.0:
        side = "above"
    return SPEED[side] == chosen


def prefill_most_in_runs(latency: Latency, time: Timing | None) -> bool:
    """latency.prefill_most's check: each run's first token's stamp over its n-th's."""
    if not latency.with_cache.speed:
        return False
    n = latency.with_cache.speed[0].n
    shares = [run.stamps_s[1] / run.stamps_s[n] for run in latency.with_cache.runs]
    found = interval.median_interval(shares, level_of(time))
    return found.decisive and found.low > 0.5


def cost_in_runs(latency: Latency, chosen: str) -> bool:
    """latency.cost's check: the timed cached runs themselves (the runs' own clock) over the
    runs without the streamer after them, round by round."""
    without = latency.cost.without_streamer_s
    runs = latency.with_cache.runs[: len(without)]
    if not runs:
        return chosen == "undecided"
    found = interval.median_interval([run.seconds / s for run, s in zip(runs, without)])
    return COST[interval.ratio_decision(found)] == chosen


def cached_limits_in_runs(latency: Latency, time: Timing, chosen: str) -> bool:
    """latency.cached_limits's check (:func:`limits_in_runs`)."""
    return limits_in_runs(latency, time, "with_cache") == chosen


def uncached_limits_in_runs(latency: Latency, time: Timing, chosen: str) -> bool:
    """latency.uncached_limits's check (:func:`limits_in_runs`)."""
    return limits_in_runs(latency, time, "without_cache") == chosen


ORACLES: dict[str, Callable[[Mapping, Mapping], bool]] = {
    "latency.sweep_crossing": sweep_crosses,
    "time.cached_limits": judged_by(cached_limits_in_runs, "latency", "time"),
    "time.uncached_limits": judged_by(uncached_limits_in_runs, "latency", "time"),
    "time.lesson": judged_by(lesson_in_runs, "latency", "time"),
    "time.uncached_gap": judged_by(gap_in_runs, "latency", "time"),
    "time.ttft_paths": judged_by(ttft_paths_in_runs, "latency", "time"),
    "time.tpot_agrees": judged_by(tpot_agrees_in_runs, "latency", "time"),
    "time.speed": judged_by(speed_in_runs, "latency", "time"),
    "time.prefill_most": judged_by(prefill_most_in_runs, "latency", "time"),
    "time.cost": judged_by(cost_in_runs, "latency"),
}
