"""time.json: median seconds with and without the cache, how far to trust them. Record, facts."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mminfer.records import RunInfo, token_ratio
from mminfer.records.claims import Claim, claim
from mminfer.records.spread import coefficient_of_variation

if TYPE_CHECKING:
    from mminfer.measures.anatomy.anatomy import Anatomy
    from mminfer.measures.cache.fed import Count
    from mminfer.measures.sweep.sweep import Sweep


@dataclass
class Timing:
    """time.json: median seconds of each method after warm-ups, and how far to trust them."""

    with_cache_s: float
    without_cache_s: float
    speedup: float  # without / with
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
    run: RunInfo


def time_facts(
    time: Timing, fed: Count, sweep: Sweep | None = None, anatomy: Anatomy | None = None
) -> dict:
    """time.json and its verdict (see mminfer.measures.time.measure): ok, noisy, or untrusted; and
    the reason
    the speedup and the token ratio differ, as far as the records show it (:func:`reason_of`)."""
    ratio = token_ratio(fed)
    below = time.speedup < ratio
    about = {"speedup": time.speedup, "token_ratio": ratio}
    return vars(time) | {
        "rounds": round_claims(time),
        "below_claim": claim("time.speedup_below_tokens", below, **about),
        "not_below_claim": claim("time.speedup_not_below_tokens", not below, **about),
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
        "token_ratio": ratio,
        "trusted": time.verdict != "untrusted",
        "speedup_below_token_ratio": below,
        "took_extra_rounds": time.extra_rounds > 0,
        "extra_rounds_claim": extra_rounds_claim(time),
        "reason": reason_of(time, below, sweep, anatomy, ratio),
        # one step of each way, on average: the measured terms when no record gives the reason
        "step_with_cache_s": time.with_cache_s / time.new_tokens,
        "step_without_cache_s": time.without_cache_s / time.new_tokens,
        "tokens_per_step_without_cache": fed.fed_without_cache / time.new_tokens,
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


def reason_of(
    time: Timing,
    below: bool,
    sweep: Sweep | None,
    anatomy: Anatomy | None = None,
    tokens: float | None = None,
) -> dict:
    """Why the speedup differs from the token ratio, chosen from what the records show.

    ``kind``: "untrusted" (the time itself must not be believed: no comparison); "anatomy"
    (anatomy.json counted this very generation, at time.json's P and N, on its model and
    threads: :func:`anatomy_reason`); "fixed_share"
    (the speedup falls short and sweep.json's step fit holds: claims of the share of the cached
    path's measured time N x its per-step fixed cost takes, or that it passes that time, at
    ``new_tokens``, time.json's length where the sweep clocked it, else the sweep's longest
    clocked); "attention" (the speedup passes the token ratio and
    the fit holds with a cost per attention pair above 0); "unknown" (no record shows it;
    ``sweep_fit``: "absent", "not_holding" or "holding", what the sweep could say).
    """
    if time.verdict == "untrusted":
        return {"kind": "untrusted"}
    if anatomy is not None and anatomy.comparable(time) == "yes":
        return anatomy_reason(time, anatomy, tokens)
    if sweep is None:
        return {"kind": "unknown", "sweep_fit": "absent"}
    if sweep.verdict == "untrusted" or not sweep.fit.holds:
        return {"kind": "unknown", "sweep_fit": "not_holding"}
    if not below:
        if sweep.fit.per_pair_s > 0:
            return {"kind": "attention", "per_pair_s": sweep.fit.per_pair_s}
        return {"kind": "unknown", "sweep_fit": "holding"}
    measured = [point for point in sweep.points if point.without_cache_from == "clocked"]
    measured = [point for point in measured if point.with_cache_s > 0] or sweep.points
    chosen = measured[-1]
    for point in measured:
        if point.new_tokens == time.new_tokens:
            chosen = point
    fixed_total = chosen.new_tokens * sweep.fit.fixed_s_with_cache
    share = fixed_total / chosen.with_cache_s if chosen.with_cache_s > 0 else float("inf")
    about = {
        "new_tokens": chosen.new_tokens,
        "share": share,
        "fixed_total_s": fixed_total,
        "measured_s": chosen.with_cache_s,
    }
    return {
        "kind": "fixed_share",
        "new_tokens": chosen.new_tokens,
        "prompt_len": sweep.prompt_len,
        "same_length": chosen.new_tokens == time.new_tokens,
        "same_prompt": sweep.prompt_len == time.prompt_len,
        # the fixed cost's share of the cached path's time measured there (N x the fit's fixed
        # cost per step over it), not of the fit's own prediction; none where it passes it
        "share": claim("time.fixed_share", share <= 1, **about),
        "exceeds": claim("time.fixed_exceeds", share > 1, **about),
    }


def anatomy_reason(time: Timing, anatomy: Anatomy, tokens: float) -> dict:
    """The reason line from anatomy.json, at time.json's own P and N.

    What the cache cuts, as ratios of the uncached path's totals over the cached one's: its
    FLOPs, against the calls of forward, the kernels run and the bytes moved, which every call
    pays whatever it is fed. ``cuts_flops_not_calls``: fewer FLOPs, the same calls.
    ``between``: the per-call work's ratios (kernels, bytes) no more than the speedup, the
    speedup no more than the FLOPs' ratio, the per-call work's below the token ratio
    (``tokens``); ``above_flops`` and ``below_per_call`` its alternatives. ``dispatch_share``:
    the cached path's kernels at the op probe's cost, a share of its measured median (no more
    than all of it). ``lm_head``: the uncached path computes more logits rows than it uses.
    """
    cached = anatomy.with_cache.totals
    uncached = anatomy.without_cache.totals
    ratios = {
        "flops": uncached.flops_formula / cached.flops_formula,
        "ops": uncached.ops / cached.ops,
        "bytes": uncached.bytes_formula / cached.bytes_formula,
    }
    per_call = max(ratios["ops"], ratios["bytes"])
    about = ratios | {
        "speedup": time.speedup,
        "calls": cached.calls,
        "per_call": per_call,
        "tokens": tokens,
    }
    same_calls = cached.calls == uncached.calls
    split = anatomy.split("with_cache", time.with_cache_s)
    dispatch_s = split.seconds["dispatch"]
    return {
        "kind": "anatomy",
        "prompt_len": anatomy.prompt_len,
        "new_tokens": anatomy.new_tokens,
        # "캐시는 FLOPs를 R배 줄이지만 forward 호출은 두 경로 모두 N회이고 ..."
        "cuts_flops_not_calls": claim(
            "time.anatomy_cuts_flops_not_calls", same_calls and ratios["flops"] > 1, **about
        ),
        "between": claim(
            "time.anatomy_between",
            same_calls and per_call <= time.speedup <= ratios["flops"] and per_call < tokens,
            **about,
        ),
        "above_flops": claim(
            "time.anatomy_above_flops", same_calls and time.speedup > ratios["flops"], **about
        ),
        "below_per_call": claim(
            "time.anatomy_below_per_call", same_calls and time.speedup < per_call, **about
        ),
        "dispatch_share": claim(
            "time.anatomy_dispatch_share",
            dispatch_s <= time.with_cache_s,
            ops=cached.ops,
            op_s=1 / anatomy.machine.op.per_s,
            dispatch_s=dispatch_s,
            measured_s=time.with_cache_s,
            share=dispatch_s / time.with_cache_s,
        ),
        "lm_head": claim(
            "time.anatomy_lm_head",
            uncached.logits_rows > uncached.logits_rows_keep_one,
            rows=uncached.logits_rows,
            rows_keep_one=uncached.logits_rows_keep_one,
            flops_share=uncached.formula_parts["lm_head"] / uncached.flops_formula,
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
