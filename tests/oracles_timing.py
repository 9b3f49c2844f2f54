"""The oracles of the timing side's claims: time, sweep, serve, same, run (kvbytes's and capacity's
sentences are checked by their own predicates, beside their words: their SENTENCES).

Each reads its sentence's literal words and checks them on the record's raw numbers (the runs'
seconds, the steps' clocked times and their ranges, the passes' median steps and prefills), never
on the facts' intermediate values. ``ORACLES[key](records, about)``: tests/oracles.py merges them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from pathlib import PurePosixPath

from mminfer.records import interval
from mminfer.records.machine import BUSY_PRESSURE, BUSY_SHARE, contention_of, is_busy
from mminfer.report.busy import busy_of, timed_contentions


def close(a: float, b: float) -> bool:
    """Two figures the same to rounding (a claim cites the figure its check used)."""
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-15)


def count_differs_from_formula(records, about) -> bool:
    """ "`forward`에 넣은 토큰이 공식과 다르다": a count against its formula, computed here from
    P and N (P + (N - 1) with the cache, N P + N (N - 1) / 2 without); the words print the
    record's counts (count.py's sentence)."""
    count = records["count"]
    p, n = count.prompt_len, count.new_tokens
    with_cache = p + n - 1
    without_cache = n * p + n * (n - 1) // 2
    return count.fed_with_cache != with_cache or count.fed_without_cache != without_cache


# --- time.json ---------------------------------------------------------------------------------
# Each recomputes from the raw rounds with the interval arithmetic alone, never with
# mminfer.measures.time.decide, whose functions the sentences call.


def time_speedups(time):
    """The per-round speedups' median interval at the timing's per-look level."""
    level = interval.look_level(time.runs, time.max_runs)
    return interval.ratio_interval(time.without_cache_runs_s, time.with_cache_runs_s, level)


def time_cache_faster(records, about) -> bool:
    """time.cache_faster: "yes" only where every round's ratio interval lies above 1 + 5 %-band,
    "no" wholly below 1, "same" within [1/1.05, 1.05], "undecided" short of its level; the word
    written is the one time.json stores."""
    time, speedups = records["time"], time_speedups(records["time"])
    if not speedups.decisive:
        found = "undecided"
    elif speedups.low >= 1 / 1.05 and speedups.high <= 1.05:
        found = "same"
    elif speedups.low > 1:
        found = "yes"
    elif speedups.high < 1:
        found = "no"
    else:
        found = "undecided"
    return found == about["variant"] == time.cache_faster


def time_reason(records, about) -> bool:
    """time.reason: the paired speedups' interval against the token ratio counted from
    count.json's fed tokens: "short" wholly below it, "past" wholly above, else "undecided"."""
    count, speedups = records["count"], time_speedups(records["time"])
    ratio = count.fed_without_cache / count.fed_with_cache
    found = "undecided"
    if speedups.decisive and speedups.high < ratio:
        found = "short"
    elif speedups.decisive and speedups.low > ratio:
        found = "past"
    return found == about["variant"]


def time_fixed_cost(records, about) -> bool:
    """time.fixed_cost_said: the narrow runs over the cached ones, round by round; only their
    interval's low end bounds the fixed share: past 1 "above", at least 0.9 "almost_all", else
    "at_least"; "undecided" short of the level."""
    time = records["time"]
    level = interval.look_level(time.runs, time.max_runs)
    shares = interval.ratio_interval(time.narrow_runs_s, time.with_cache_runs_s, level)
    found = "undecided"
    if shares.decisive and shares.low > 1:
        found = "above"
    elif shares.decisive and shares.low >= 0.9:
        found = "almost_all"
    elif shares.decisive:
        found = "at_least"
    return found == about["variant"]


def time_extra_rounds(records, about) -> bool:
    """time.extra_rounds ("처음 N회로는 speedup을 가를 수 없어 M라운드를 더 쟀다"): M rounds more
    than the first N, and those first N alone left the paired speedup undecided."""
    time = records["time"]
    if time.extra_rounds <= 0 or len(time.with_cache_runs_s) != time.runs + time.extra_rounds:
        return False
    level = interval.look_level(time.runs, time.max_runs)
    first = interval.ratio_interval(
        time.without_cache_runs_s[: time.runs], time.with_cache_runs_s[: time.runs], level
    )
    return not first.decisive or (
        first.low <= 1 <= first.high and not (first.low >= 1 / 1.05 and first.high <= 1.05)
    )


# --- serve.json -------------------------------------------------------------------------------


def serve_cliff_cache(records, about) -> bool:
    """ "장치 캐시를 넘음(추정): L2, ...": each named cache's size lies between the memory the
    step reads at the two batches (every weight and the batch's KV cache)."""
    serve, asked = records["serve"], about["cliff"]  # the table row's cliff, as asked
    levels = [level.name for level in asked.crossed]
    sizes = {level.name: level.bytes for level in serve.caches}
    for cliff in serve.cliffs:
        if (cliff.from_batch, cliff.to_batch) != (asked.from_batch, asked.to_batch):
            continue
        before = cliff.weight_bytes + cliff.kv_bytes_before
        after = cliff.weight_bytes + cliff.kv_bytes_after
        return bool(levels) and all(
            name in sizes and before < sizes[name] <= after for name in levels
        )
    return False


# --- same, run ---------------------------------------------------------------------------


def run_course_folder(records, about) -> bool:
    """ "(MiniMind 강의 체크포인트, /opt/mm)": both checkpoints the run read lie in it; "읽은 폴더
    ...": not both do."""
    folder = PurePosixPath("/opt/mm")  # the course machine's folder, as the README names it
    runs = [records["same"].run, next(iter(records["temp"].values())).run]
    inside = all(PurePosixPath(run.checkpoint).is_relative_to(folder) for run in runs)
    return inside == (about["variant"] == "inside")


def judged(found: Callable[[Mapping], str], word: str) -> Callable[[Mapping, Mapping], bool]:
    return lambda records, about: found(records) == word


def judged_by(check, *names: str):
    """The oracle ``(records, about)`` of a re-derivation over the records ``names`` (in its
    parameters' order), given the variant written where the sentence has variants."""

    def oracle(records, about) -> bool:
        given = [records.get(name) for name in names]
        if "variant" in about:
            return check(*given, about["variant"])
        return check(*given)

    return oracle


def load_named(names: tuple[str, str]):
    """A load named as the cause (``<section>.load_against_<other>``): the side written ran busy
    by its figures and the other did not."""
    return lambda records, about: busy_alone_in_figures(
        records.get(names[0]), records.get(names[1]), names, about["variant"]
    )


def busy_recomputed(records) -> bool:
    """busy.busy_of's oracle: the busy records recomputed from their contention figures (the
    process's CPU share under BUSY_SHARE, the kernel's CPU pressure over BUSY_PRESSURE), never
    from the stored flag, are those the words name, and there is one at least (the checker holds
    each stored flag to its figures: mminfer.report.check.stored_decisions)."""
    recomputed = [
        name
        for name, contention in timed_contentions(**records).items()
        if (contention.cpu_share is not None and contention.cpu_share < BUSY_SHARE)
        or (contention.cpu_pressure is not None and contention.cpu_pressure > BUSY_PRESSURE)
    ]
    named = [busy["rule"] for busy in busy_of(records) or []]
    return bool(recomputed) and recomputed == named


def busy_alone_in_figures(one, other, names: tuple[str, str], chosen: str) -> bool:
    """A load cause's oracle: the side named ran busy by its figures (is_busy, never the stored
    flag) and the other did not."""
    busy = {}
    for name, record in zip(names, (one, other)):
        contention = contention_of(record)
        busy[name] = contention is not None and is_busy(
            contention.cpu_share, contention.cpu_pressure
        )
    (other_name,) = [name for name in names if name != chosen]
    return busy[chosen] and not busy[other_name]


ORACLES: dict[str, Callable[[Mapping, Mapping], bool]] = {
    "cache.counts_differ": count_differs_from_formula,
    "time.cache_faster": time_cache_faster,
    "time.reason": time_reason,
    "time.fixed_cost_said": time_fixed_cost,
    "time.extra_rounds": time_extra_rounds,
    "serve.cliff_cache": serve_cliff_cache,
    "run.course_folder": run_course_folder,
    "busy.busy_of": lambda records, about: busy_recomputed(records),
    "sweep.load_against_time": load_named(("time", "sweep")),
    "sweep.load_against_latency": load_named(("latency", "sweep")),
    "serve.load_against_sweep": load_named(("serve", "sweep")),
}
