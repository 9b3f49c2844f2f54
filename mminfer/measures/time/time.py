"""time.json: median seconds with and without the cache, how far to trust them. Record, facts."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from mminfer.records import RunInfo
from mminfer.records.claims import Claim, claim
from mminfer.records.interval import Interval
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
    threads: int
    cpu_count: int | None
    load_before: list[float] | None  # 1-, 5- and 15-minute load averages
    load_after: list[float] | None
    contention: Contention | None  # during the timed rounds (mminfer.records.machine)
    run: RunInfo


def time_facts(time: Timing) -> dict:
    """time.json and its verdict (see mminfer.measures.time.measure): ok, noisy, or untrusted.

    Its own record only: the speedup against the token ratio (count.json) and the reason they
    differ (sweep.json, anatomy.json) are the report's join, mminfer.report.joins."""
    return vars(time) | {
        "rounds": round_claims(time),
        "estimate": time.verdict == "noisy",  # the speedup is said as an estimate (≈)
        # "캐시를 쓰면 생성이 N배 빠르다": the cache's median faster, the timing not untrusted
        # "둘 다 {noisy_cv} 이하다": both methods' runs spread no more than the threshold
        "spreads_within": claim(
            "time.spreads_within",
            max(time.cv_with_cache, time.cv_without_cache) <= time.noisy_cv,
            threshold=time.noisy_cv,
        ),
        # "... 로 {noisy_cv}를 넘는 쪽이 있다"
        "spread_over": claim(
            "time.spread_over",
            max(time.cv_with_cache, time.cv_without_cache) > time.noisy_cv,
            threshold=time.noisy_cv,
        ),
        # "방법당 N회까지 재고도 캐시 쪽이 빠르지 않았다": the cached median no faster
        "not_faster": claim(
            "time.cache_not_faster",
            time.with_cache_s >= time.without_cache_s,
            runs=time.runs_done,
        ),
        "faster": claim(
            "time.cache_faster",
            time.verdict != "untrusted" and time.speedup > 1,
            speedup=time.speedup,
        ),
        "trusted": time.verdict != "untrusted",
        "took_extra_rounds": time.extra_rounds > 0,
        "extra_rounds_claim": extra_rounds_claim(time),
        # one step of each way, on average: the measured terms when no record gives the reason
        "step_with_cache_s": time.with_cache_s / time.new_tokens,
        "step_without_cache_s": time.without_cache_s / time.new_tokens,
    }


def round_claims(time: Timing) -> dict[str, Claim]:
    """The rounds (one run of each method, interleaved): ``every``, the cache faster in every
    round; ``some_slower``, the cache slower (or as slow) in ``slower`` of the ``rounds``."""
    pairs = list(zip(time.with_cache_runs_s, time.without_cache_runs_s))
    slower = sum(with_s >= without_s for with_s, without_s in pairs)
    return {
        "every": claim(
            "time.cache_faster_every_round", bool(pairs) and slower == 0, rounds=len(pairs)
        ),
        "some_slower": claim(
            "time.cache_slower_in_rounds", slower > 0, slower=slower, rounds=len(pairs)
        ),
    }


def extra_rounds_claim(time: Timing) -> Claim:
    """ "처음 N회로는 의심스러워 M라운드를 더 쟀다": each method's runs are N + M, M > 0, and the
    first N of them were in doubt (the cache's median not faster, or a spread over noisy_cv)."""
    first_with = time.with_cache_runs_s[: time.runs]
    first_without = time.without_cache_runs_s[: time.runs]
    counted = (
        time.extra_rounds > 0
        and len(time.with_cache_runs_s) == time.runs + time.extra_rounds
        and len(time.without_cache_runs_s) == time.runs + time.extra_rounds
    )
    doubted = False
    if counted and len(first_with) > 1:
        doubted = (
            statistics.median(first_with) >= statistics.median(first_without)
            or coefficient_of_variation(first_with) > time.noisy_cv
            or coefficient_of_variation(first_without) > time.noisy_cv
        )
    return claim("time.extra_rounds", counted and doubted, runs=time.runs, extra=time.extra_rounds)
