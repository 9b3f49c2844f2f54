"""latency.json: what a user waits for, from the time job's own runs. Record, facts, glance.

Every timed run of time.json (warm-ups out) carried a streamer that stamped each of generate's
``put`` calls with the run's own clock (mminfer.timing.clock.StampingStreamer): the time to the
first
new token (TTFT), the gaps between tokens (ITL), the time per output token after the first
(TPOT = (end-to-end - TTFT) / (N - 1)) and the end-to-end time to the last token, per run and
pooled; eval_llm.py's ``[Speed]`` computed its way from the same stamps; the streamer's own cost.
"""

from __future__ import annotations

import itertools
import math
import statistics
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mminfer.records import RunInfo, interval
from mminfer.records.interval import Interval, paired_ratios
from mminfer.records.machine import Contention

if TYPE_CHECKING:
    from mminfer.measures.time.time import Timing

# MLPerf Inference's interactive scenario holds TTFT and TPOT at their 99th percentile.
LIMITS_SOURCE = "MLPerf Inference v5.1, llama3.1-8b-interactive: TTFT p99 500 ms, TPOT p99 30 ms"
TTFT_LIMIT_S = 0.5
TPOT_LIMIT_S = 0.03


@dataclass
class RunLatency:
    """One timed run, every figure from the run's start (the time job's read before generate)."""

    seconds: float  # the time job's clock of this run (time.json's run)
    streamed_s: float  # the streamer's end(), from the start: the run as the streamer saw it
    stamps_s: list[float]  # each put: [0] the prompt's, [1:] one per new token
    ttft_s: float  # the first new token's put
    e2e_s: float  # the last new token's put
    tpot_s: float  # (e2e - ttft) / (N - 1)
    itl_p50_s: float  # of this run's gaps between new tokens
    itl_p90_s: float
    itl_p99_s: float
    itl_max_s: float


@dataclass
class EvalSpeed:
    """eval_llm.py's ``[Speed]`` for the first ``n`` tokens: n / (time from before generate to the
    n-th token), median over the runs."""

    n: int
    tokens_per_s: float
    runs_tokens_per_s: list[float]
    ttft_share: float  # the TTFT's share of the time to the n-th token (median run's)


@dataclass
class PathLatency:
    """One path's (with or without the cache) latency over the timed runs."""

    ttft_s: float  # medians over the runs
    tpot_s: float
    ttft_interval: Interval  # ttft_s and its order-statistic interval (mminfer.records.interval)
    tpot_interval: Interval  # at the time job's per-look level
    e2e_s: float
    cv_ttft: float
    cv_tpot: float
    cv_e2e: float
    itl_p50_s: float  # pooled over every gap of every timed run
    itl_p90_s: float
    itl_p99_s: float
    itl_max_s: float
    ttft_p99_s: float  # over the runs (with few runs, near their slowest)
    tpot_p99_s: float
    decode_tokens_per_s: float  # 1 / TPOT
    step_gap_s: list[float]  # median gap per step: token k + 1 after token k, k = 1 .. N - 1
    step_gap_low_s: list[float]  # the fastest run's
    step_gap_high_s: list[float]
    context: list[int]  # tokens the step's attention covers: P + k
    fed: list[int]  # tokens the step feeds into forward: 1 with the cache, P + k without
    speed: list[EvalSpeed]
    runs: list[RunLatency]


@dataclass
class StreamerCost:
    """What the streamer adds to a cached run: that path's generate without it, one run after
    each of the first ``rounds`` timed rounds, against the round's timed run with it; and its
    calls alone (1 + N puts of ``.cpu()``'d ids and an end) against the same loop without them."""

    puts: int
    rounds: int  # the paired rounds
    with_streamer_s: list[float]  # the paired rounds' timed cached runs
    without_streamer_s: list[float]  # the cached path without the streamer, after each
    per_run_s: float  # the median of (with - without), signed
    with_cache_s: float  # the cached path's median timed run (time.json's with_cache_s)
    calls_s: float  # the calls alone in one run (median with - median without, at least 0)
    method: str


@dataclass
class Latency:
    """latency.json: TTFT, TPOT, ITL and end-to-end from time.json's timed runs, both paths."""

    prompt_len: int
    new_tokens: int
    warmup: int  # the time job's warm-ups, left out
    runs_done: int
    verdict: str  # the time job's
    doubts: list[str]
    noisy_cv: float
    with_cache: PathLatency
    without_cache: PathLatency
    speed_tokens: list[int]  # eval_llm's [Speed] at these n
    cost: StreamerCost
    ttft_limit_s: float
    tpot_limit_s: float
    limits_source: str
    clock: str
    threads: int
    contention: Contention | None  # during the timed rounds (time.json's, the same runs)
    run: RunInfo


def paths(latency: Latency) -> dict[str, PathLatency]:
    return {"with_cache": latency.with_cache, "without_cache": latency.without_cache}


def limits(latency: Latency, name: str) -> str:
    """A path against the interactive limits: "within" where its TTFT's and its TPOT's intervals
    lie wholly below their limits, "over" where either lies wholly above, else "undecided"."""
    path = paths(latency)[name]
    found = {
        interval.against(path.ttft_interval, latency.ttft_limit_s),
        interval.against(path.tpot_interval, latency.tpot_limit_s),
    }
    if found == {"below"}:
        return "within"
    return "over" if "above" in found else "undecided"


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


def lesson(latency: Latency) -> str:
    """latency.lesson: "untrusted" (the time job's verdict), "both_within", "cached_within" (the
    uncached path over), "over" (the cached path over), else "undecided"."""
    if latency.verdict == "untrusted":
        return "untrusted"
    cached, uncached = limits(latency, "with_cache"), limits(latency, "without_cache")
    if cached == "within":
        return {"within": "both_within", "over": "cached_within"}.get(uncached, "undecided")
    return "over" if cached == "over" else "undecided"


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


def quarter(latency: Latency) -> int:
    """The steps compared at each end of the uncached path's gaps: a quarter of them."""
    return max(1, (latency.new_tokens - 1) // 4)


def gap_ratios(latency: Latency) -> list[float]:
    """Each uncached run's median gap over its last quarter of steps over its first quarter's,
    from the run's stamps (the record keeps no other per-run gaps)."""
    k = quarter(latency)
    ratios = []
    for run in latency.without_cache.runs:
        tokens = run.stamps_s[1:]
        gaps = [b - a for a, b in itertools.pairwise(tokens)]
        first, last = statistics.median(gaps[:k]), statistics.median(gaps[-k:])
        ratios.append(last / first if first > 0 else math.inf)
    return ratios


def level_of(time: Timing | None) -> float:
    return interval.FAMILY_LEVEL if time is None else interval.look_level(time.runs, time.max_runs)


def decided(values: list[float], time: Timing | None) -> str:
    """Per-round values' interval at the time job's level of its looks: "above" or "below" 1,
    "same" within the noise threshold, or "undecided" (mminfer.records.interval)."""
    return interval.ratio_decision(interval.median_interval(values, level_of(time)))


# --- the sentences' predicates (the record's per-run summaries) and their checks (each run's
# stamps alone: [0] the prompt's put, [1] the first new token's, [-1] the last's) -----------------


def uncached_gap(latency: Latency, time: Timing | None) -> str | None:
    """latency.uncached_gap: "grows" where the uncached runs' last steps over their first lie
    wholly above 1, else "undecided"; None for fewer than two gaps."""
    if latency.new_tokens < 3:
        return None
    found = interval.against(interval.median_interval(gap_ratios(latency), level_of(time)), 1.0)
    return "grows" if found == "above" else "undecided"


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


PAIRED = {"same": "same", "undecided": "undecided", "above": "differs", "below": "differs"}


def ttft_paths(latency: Latency, time: Timing | None) -> str:
    """latency.ttft_paths: the uncached over the cached TTFT, round by round (the same prefill
    of P tokens): "same" within the noise threshold, "differs", or "undecided"."""
    without, with_ = latency.without_cache.runs, latency.with_cache.runs
    ratios = paired_ratios([run.ttft_s for run in without], [run.ttft_s for run in with_])
    return PAIRED[decided(ratios, time)]


def ttft_paths_in_runs(latency: Latency, time: Timing | None, chosen: str) -> bool:
    """latency.ttft_paths's check: each round's first-token stamps, uncached over cached."""
    pairs = zip(latency.without_cache.runs, latency.with_cache.runs, strict=True)
    return PAIRED[decided([a.stamps_s[1] / b.stamps_s[1] for a, b in pairs], time)] == chosen


AGREES = {"same": "agrees", "undecided": "undecided", "above": "apart", "below": "apart"}


def tpot_agrees(latency: Latency, time: Timing | None) -> str | None:
    """latency.tpot_agrees: the cached TPOT over time.json's time after the first token per
    token ((run seconds - TTFT) / (N - 1)), run by run: "agrees" within the noise threshold,
    "apart", "undecided"; None without time.json."""
    if time is None or latency.new_tokens < 2:
        return None
    runs = latency.with_cache.runs
    pairs = zip(time.with_cache_runs_s, runs, strict=True)
    after = [(seconds - run.ttft_s) / (latency.new_tokens - 1) for seconds, run in pairs]
    return AGREES[decided(paired_ratios([run.tpot_s for run in runs], after), time)]


def tpot_agrees_in_runs(latency: Latency, time: Timing, chosen: str) -> bool:
    """latency.tpot_agrees's check: each run's first to last new token's stamps over time.json's
    run less its first token's stamp (the N - 1 tokens after the first, both ways)."""
    runs = zip(time.with_cache_runs_s, latency.with_cache.runs, strict=True)
    ratios = [(run.stamps_s[-1] - run.stamps_s[1]) / (s - run.stamps_s[1]) for s, run in runs]
    return AGREES[decided(ratios, time)] == chosen


SPEED = {"below": "below", "above": "not_below", "undecided": "undecided"}


def speed(latency: Latency, time: Timing | None) -> str | None:
    """latency.speed: eval_llm's [Speed] at the smallest n over the decode rate (1 / TPOT), run
    by run: "below", "not_below" (wholly above 1), "undecided"; None without a [Speed]."""
    path = latency.with_cache
    if not path.speed:
        return None
    runs = zip(path.runs, path.speed[0].runs_tokens_per_s, strict=True)
    ratios = [tokens_per_s * run.tpot_s for run, tokens_per_s in runs]
    found = interval.against(interval.median_interval(ratios, level_of(time)), 1.0)
    return SPEED[found]


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


def prefill_most(latency: Latency, time: Timing | None) -> bool:
    """latency.prefill_most: the TTFT's share of the time to the n-th token (n over [Speed]'s
    tokens per second) lies wholly above half, run by run."""
    path = latency.with_cache
    if not path.speed:
        return False
    n = path.speed[0].n
    runs = zip(path.runs, path.speed[0].runs_tokens_per_s, strict=True)
    shares = [run.ttft_s * tokens_per_s / n for run, tokens_per_s in runs]
    return interval.against(interval.median_interval(shares, level_of(time)), 0.5) == "above"


def prefill_most_in_runs(latency: Latency, time: Timing | None) -> bool:
    """latency.prefill_most's check: each run's first token's stamp over its n-th's."""
    if not latency.with_cache.speed:
        return False
    n = latency.with_cache.speed[0].n
    shares = [run.stamps_s[1] / run.stamps_s[n] for run in latency.with_cache.runs]
    found = interval.median_interval(shares, level_of(time))
    return found.decisive and found.low > 0.5


COST = {"above": "adds", "below": "faster", "same": "same", "undecided": "undecided"}


def cost(latency: Latency) -> str:
    """latency.cost: the paired rounds' cached run with the streamer over the one without it:
    "adds", "faster", "same" or "undecided" (one look, at FAMILY_LEVEL)."""
    cost = latency.cost
    ratios = paired_ratios(cost.with_streamer_s, cost.without_streamer_s)
    if not ratios:
        return "undecided"
    return COST[interval.ratio_decision(interval.median_interval(ratios))]


def cost_in_runs(latency: Latency, chosen: str) -> bool:
    """latency.cost's check: the timed cached runs themselves (the runs' own clock) over the
    runs without the streamer after them, round by round."""
    without = latency.cost.without_streamer_s
    runs = latency.with_cache.runs[: len(without)]
    if not runs:
        return chosen == "undecided"
    found = interval.median_interval([run.seconds / s for run, s in zip(runs, without)])
    return COST[interval.ratio_decision(found)] == chosen


def cached_limits(latency: Latency) -> str:
    """latency.cached_limits: the cached path against the interactive limits (:func:`limits`)."""
    return limits(latency, "with_cache")


def uncached_limits(latency: Latency) -> str:
    """latency.uncached_limits: the uncached path against the interactive limits."""
    return limits(latency, "without_cache")


def cached_limits_in_runs(latency: Latency, time: Timing, chosen: str) -> bool:
    """latency.cached_limits's check (:func:`limits_in_runs`)."""
    return limits_in_runs(latency, time, "with_cache") == chosen


def uncached_limits_in_runs(latency: Latency, time: Timing, chosen: str) -> bool:
    """latency.uncached_limits's check (:func:`limits_in_runs`)."""
    return limits_in_runs(latency, time, "without_cache") == chosen
