"""time.json: median seconds with and without the cache, how far to trust them. Record, facts.

Beside the two sides, the time job times a third in the same rounds: the narrow model's cached
generate (mminfer.model.narrow: the same class at minimal width), once after each timed round.
Divided by that round's cached run, it gives a lower bound of the cached path's share that is
fixed cost per call (``fixed_share_runs``); :func:`fixed_cost` decides what those rounds say.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mminfer.records import RunInfo
from mminfer.records.interval import (
    Interval,
    look_level,
    median_interval,
    over,
    place,
    ratio_decision,
    ratio_interval,
    rounds_decision,
)
from mminfer.records.machine import Contention
from mminfer.records.spread import coefficient_of_variation


@dataclass
class Timing:
    """time.json: median seconds of each method after warm-ups, and how far to trust them."""

    with_cache_s: float
    without_cache_s: float
    speedup: float  # without / with
    with_cache_interval: Interval  # the median and its interval (mminfer.records.interval)
    without_cache_interval: Interval
    speedup_interval: Interval  # of the per-round speedups (without / with, round by round)
    cache_faster: str  # the speedup interval's decision: "yes", "no", "same" or "undecided"
    # the interval of ``speedup`` itself (the ratio of the two medians): the medians' interval
    # ends divided across (mminfer.records.interval.over), coverage at least 1 - both misses
    speedup_medians_interval: Interval
    prompt_len: int
    new_tokens: int
    warmup: int
    runs: int
    max_runs: int
    order: str
    cv_with_cache: float  # coefficient of variation of the timed runs
    cv_without_cache: float
    runs_done: int
    extra_rounds: int
    doubts: list[str]
    verdict: str  # "ok", "noisy" or "untrusted"
    noisy_cv: float
    clock: str  # the clock the runs were read by: "perf_counter", or the tests' jitter
    with_cache_runs_s: list[float]
    without_cache_runs_s: list[float]
    with_cache_warmup_s: list[float]
    without_cache_warmup_s: list[float]
    # the narrow side: the minimal-width model's cached generate at the same P and N, greedy,
    # with a streamer where the cached runs carry one; one after each timed round (extra rounds
    # too), read by the device's clock as they are (mminfer.measures.time.measure.NarrowSide)
    narrow_runs_s: list[float]  # paired with with_cache_runs_s by index
    narrow_warmup_s: list[float]  # its own warm-ups, before the rounds
    narrow_s: float  # the median of narrow_runs_s
    narrow_shape: dict[str, int]  # the narrow model's config: widths, layers, heads, KV heads
    # per round, narrow / with cache: a lower bound of the cached path's share that is fixed cost
    fixed_share_runs: list[float]
    fixed_share_interval: Interval  # of fixed_share_runs, at the timing's per-look level
    threads: int
    cpu_count: int | None
    load_before: list[float] | None  # 1-, 5- and 15-minute load averages
    load_after: list[float] | None
    contention: Contention | None  # during the timed rounds (mminfer.records.machine)
    run: RunInfo

    def fixed_share_bound(self) -> float:
        """The fixed share's lower bound the words print (:func:`fixed_share_bound`)."""
        return fixed_share_bound(self)


def speedup_medians_in_runs(time: Timing) -> Interval:
    """The interval of ``speedup`` (the ratio of the medians) recomputed from the raw runs: each
    method's median interval at the per-look level, their ends divided across, coverage at least
    1 - the two intervals' misses (mminfer.records.interval.over)."""
    level = look_level(time.runs, time.max_runs)
    with_cache = median_interval(time.with_cache_runs_s, level)
    without_cache = median_interval(time.without_cache_runs_s, level)
    return over(without_cache, with_cache, [without_cache, with_cache])


def fixed_share_in_runs(time: Timing) -> Interval:
    """The fixed share's interval recomputed from the raw rounds (each round's narrow run / its
    cached run), at the timing's per-look level: what the report and the checker read."""
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
    share = fixed_share_in_runs(time)
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
    share = fixed_share_in_runs(time)
    percent = Interval(
        median=share.median * 100,
        low=share.low * 100,
        high=share.high * 100,
        coverage=share.coverage,
        level=share.level,
        runs=share.runs,
    )
    step = 10.0 ** place(percent.low, percent)
    return min(math.floor(percent.low / step + 1e-9) * step / 100, 1.0)


# The paired rounds' decision (mminfer.records.interval.ratio_decision) in time.json's words.
CACHE_FASTER = {"above": "yes", "below": "no", "same": "same", "undecided": "undecided"}


def decide_cache_faster(
    without_cache_runs_s: list[float], with_cache_runs_s: list[float], runs: int, max_runs: int
) -> str:
    """Whether the cache is faster, decided once, from the raw rounds: each round's without /
    with, their median's interval at the level of the timing's looks against 1: "yes", "no",
    "same" (within the noise threshold) or "undecided". time.json's ``cache_faster`` is written
    by it (mminfer.measures.time.measure), and the sentence, the glance and the checker call it
    (:func:`cache_faster`); nothing maps its words again."""
    return CACHE_FASTER[rounds_decision(without_cache_runs_s, with_cache_runs_s, runs, max_runs)]


def cache_faster(time: Timing) -> str:
    """time.cache_faster: :func:`decide_cache_faster` over the record's own rounds."""
    runs = (time.without_cache_runs_s, time.with_cache_runs_s)
    return decide_cache_faster(*runs, time.runs, time.max_runs)


def cache_faster_supported(time: Timing, chosen: str) -> bool:
    """time.cache_faster's check: the decision the raw rounds give is the variant written and the
    one time.json stores."""
    return cache_faster(time) == chosen == time.cache_faster


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
