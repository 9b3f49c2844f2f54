"""What time.json's runs decide: each question answered once, from the record's raw runs.

Every function takes the record (and a figure it is set against, passed in: the token ratio of
count.json) and returns a variant word, or the figure its words print. The time job writes
``cache_faster`` and ``fixed_share_interval`` with these functions; the report's sentences, the
glance row and the checker (mminfer.report.check) call them again. Pure Python, no torch.
"""

from __future__ import annotations

import math

from mminfer.measures.time.time import Timing
from mminfer.records.interval import (
    Interval,
    against,
    look_level,
    median_interval,
    over,
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
    share = fixed_share(time)
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
