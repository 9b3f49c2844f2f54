"""What time.json's runs decide: each question answered once, from the record's raw runs.

Every function takes the record (and a figure it is set against, passed in: the token ratio of
count.json) and returns a variant word, or the figure its words print. The time job writes
``cache_faster`` and ``fixed_share_interval`` with these functions; the report's sentences, the
glance row and the checker (mminfer.report.check) call them again. Pure Python, no torch.
"""

from __future__ import annotations

import itertools
import math
import statistics

from mminfer.measures.time.latency import Latency, PathLatency
from mminfer.measures.time.time import Timing
from mminfer.records import interval
from mminfer.records.interval import (
    Interval,
    against,
    look_level,
    median_interval,
    over,
    paired_ratios,
    place,
    ratio_decision,
    ratio_interval,
    rounds_faster,
)
from mminfer.records.spread import coefficient_of_variation


def speedup_medians(time: Timing) -> Interval:
    """The interval of ``speedup`` (the ratio of the medians), from the raw runs: each method's
    median interval at the per-look level, their ends divided across, coverage at least 1 - the
    two intervals' misses (mminfer.records.interval.over). Its median is time.json's
    ``speedup``: the one figure printed for it, with this interval, everywhere."""
    level = look_level(time.runs, time.max_runs)
    with_cache = median_interval(time.with_cache_runs_s, level)
    without_cache = median_interval(time.without_cache_runs_s, level)
    return over(without_cache, with_cache, [without_cache, with_cache])


def narrow(time: Timing) -> Interval:
    """The narrow side's median run and its interval at the timing's per-look level."""
    return median_interval(time.narrow_runs_s, look_level(time.runs, time.max_runs))


def fixed_share(time: Timing) -> Interval:
    """The fixed share's interval from the raw rounds (each round's narrow run / its cached run),
    at the timing's per-look level: the interval time.json stores as ``fixed_share_interval``."""
    level = look_level(time.runs, time.max_runs)
    return ratio_interval(time.narrow_runs_s, time.with_cache_runs_s, level)


ALMOST_ALL = 0.9  # a fixed share whose interval's low end reaches this is "(almost) all"


def fixed_cost(time: Timing) -> str:
    """What the narrow side says of the cached path's fixed cost, from the raw rounds.

    Each round's narrow run over its cached run bounds the fixed share from below, so only the
    interval's low end is read: "at_least": decisive, its low end at most 100 %: at least
    :func:`fixed_share_bound` of the cached time is fixed cost per call; "almost_all": the same
    with the low end itself at least ALMOST_ALL; "above": decisive and wholly above 1 (the narrow
    model slower than the full one): it bounds nothing on this machine; "undecided": the interval
    does not reach its level. A high end past 100 % says nothing more: an interval that holds 1 is
    not read as reaching it.
    """
    share = fixed_share(time)
    if not share.decisive:
        return "undecided"
    if share.low > 1.0:
        return "above"
    if share.low >= ALMOST_ALL:
        return "almost_all"
    return "at_least"


def fixed_share_bound(time: Timing) -> float:
    """The fixed share's lower bound that the words print: the low end of the share's interval
    recomputed from the rounds, floored at the place the interval's printed ends are rounded to
    (so that the bound is the printed low end or below it, never above), at most 100 % (where the
    low end passes 1, :func:`fixed_cost` is "above" and nothing is bounded)."""
    percent = fixed_share(time).scaled(100)
    step = 10.0 ** place(percent.low, percent)
    return min(math.floor(percent.low / step + 1e-9) * step / 100, 1.0)


def decide_cache_faster(
    without_cache_runs_s: list[float], with_cache_runs_s: list[float], runs: int, max_runs: int
) -> str:
    """Whether the cache is faster, decided once, from the raw rounds: each round's without /
    with, their median's interval at the level of the timing's looks against 1: "yes", "no",
    "same" (within the noise threshold) or "undecided". time.json's ``cache_faster`` is written
    by it (mminfer.measures.time.measure), and the sentence, the glance and the checker call it
    (:func:`cache_faster`)."""
    return rounds_faster(without_cache_runs_s, with_cache_runs_s, runs, max_runs)


def cache_faster(time: Timing) -> str:
    """time.cache_faster: :func:`decide_cache_faster` over the record's own rounds."""
    runs = (time.without_cache_runs_s, time.with_cache_runs_s)
    return decide_cache_faster(*runs, time.runs, time.max_runs)


def spread(time: Timing) -> str:
    """time.spread: both methods' runs spread within the noise threshold, or some over it."""
    spreads = (
        coefficient_of_variation(time.with_cache_runs_s),
        coefficient_of_variation(time.without_cache_runs_s),
    )
    return "within" if max(spreads) <= time.noisy_cv else "over"


def extra_rounds(time: Timing) -> bool:
    """time.extra_rounds: each method's runs are N + M, M > 0, and the first N of them left the
    speedup undecided (time_ab times more rounds only while its interval decides nothing)."""
    counted = (
        time.extra_rounds > 0
        and len(time.with_cache_runs_s) == time.runs + time.extra_rounds
        and len(time.without_cache_runs_s) == time.runs + time.extra_rounds
    )
    if not counted:
        return False
    level = look_level(time.runs, time.max_runs)
    first = ratio_interval(
        time.without_cache_runs_s[: time.runs], time.with_cache_runs_s[: time.runs], level
    )
    return ratio_decision(first) == "undecided"


def reason(time: Timing, token_ratio: float) -> str | None:
    """time.reason: the speedup's interval over the paired rounds against the token ratio
    (count.json's fed_without_cache / fed_with_cache): "short" (wholly below it), "past" (wholly
    above), "undecided"; None where the cache was not decided faster (time.cache_faster says
    why) or the time must not be believed."""
    if cache_faster(time) != "yes" or time.verdict == "untrusted":
        return None
    level = look_level(time.runs, time.max_runs)
    speedups = ratio_interval(time.without_cache_runs_s, time.with_cache_runs_s, level)
    side = against(speedups, token_ratio)
    if side == "below":
        return "short"
    if side == "above":
        return "past"
    return "undecided"


def fixed_cost_said(time: Timing, token_ratio: float) -> str | None:
    """time.fixed_cost's variant where the reason line says it: :func:`fixed_cost`, wherever the
    speedup does not pass the token ratio (short of it, or not placed against it); None where the
    time must not be believed or the speedup passes the ratio (the fixed cost is then not the
    reason)."""
    if time.verdict == "untrusted" or reason(time, token_ratio) == "past":
        return None
    return fixed_cost(time)


# --- latency.json: the paths against the interactive limits, their TTFT and TPOT, the streamer


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


def lesson(latency: Latency) -> str:
    """latency.lesson: "untrusted" (the time job's verdict), "both_within", "cached_within" (the
    uncached path over), "over" (the cached path over), else "undecided"."""
    if latency.verdict == "untrusted":
        return "untrusted"
    cached, uncached = limits(latency, "with_cache"), limits(latency, "without_cache")
    if cached == "within":
        return {"within": "both_within", "over": "cached_within"}.get(uncached, "undecided")
    return "over" if cached == "over" else "undecided"


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


def uncached_gap(latency: Latency, time: Timing | None) -> str | None:
    """latency.uncached_gap: "grows" where the uncached runs' last steps over their first lie
    wholly above 1, else "undecided"; None for fewer than two gaps."""
    if latency.new_tokens < 3:
        return None
    found = interval.against(interval.median_interval(gap_ratios(latency), level_of(time)), 1.0)
    return "grows" if found == "above" else "undecided"


PAIRED = {"same": "same", "undecided": "undecided", "above": "differs", "below": "differs"}


def ttft_paths(latency: Latency, time: Timing | None) -> str:
    """latency.ttft_paths: the uncached over the cached TTFT, round by round (the same prefill
    of P tokens): "same" within the noise threshold, "differs", or "undecided"."""
    without, with_ = latency.without_cache.runs, latency.with_cache.runs
    ratios = paired_ratios([run.ttft_s for run in without], [run.ttft_s for run in with_])
    return PAIRED[decided(ratios, time)]


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


COST = {"above": "adds", "below": "faster", "same": "same", "undecided": "undecided"}


def cost(latency: Latency) -> str:
    """latency.cost: the paired rounds' cached run with the streamer over the one without it:
    "adds", "faster", "same" or "undecided" (one look, at FAMILY_LEVEL)."""
    cost = latency.cost
    ratios = paired_ratios(cost.with_streamer_s, cost.without_streamer_s)
    if not ratios:
        return "undecided"
    return COST[interval.ratio_decision(interval.median_interval(ratios))]


def cached_limits(latency: Latency) -> str:
    """latency.cached_limits: the cached path against the interactive limits (:func:`limits`)."""
    return limits(latency, "with_cache")


def uncached_limits(latency: Latency) -> str:
    """latency.uncached_limits: the uncached path against the interactive limits."""
    return limits(latency, "without_cache")


def stored_decisions(time: Timing) -> dict[str, tuple[object, object]]:
    """time.json's stored decision beside its recomputation from the runs: key -> (stored,
    recomputed); the checker (mminfer.report.check) fails a folder where they part."""
    return {"cache_faster": (time.cache_faster, cache_faster(time))}
