"""The oracles of the timing side's claims: time, sweep, serve, same, run (kvbytes's and capacity's
sentences are checked by their own predicates, beside their words: their SENTENCES).

Each reads its sentence's literal words and checks them on the record's raw numbers (the runs'
seconds, the steps' clocked times and their ranges, the passes' median steps and prefills), never
on the facts' intermediate values. ``ORACLES[key](records, about)``: tests/oracles.py merges them.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping
from pathlib import PurePosixPath


def close(a: float, b: float) -> bool:
    """Two figures the same to rounding (a claim cites the figure its check used)."""
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-15)


def cv(values: list[float]) -> float:
    """Sample standard deviation over the mean (0 for a single value)."""
    if len(values) < 2:
        return 0.0
    return statistics.stdev(values) / statistics.mean(values)


def fed_ratio(records) -> float:
    count = records["count"]
    return count.fed_without_cache / count.fed_with_cache


def count_differs_from_formula(records, about) -> bool:
    """ "`forward`에 넣은 토큰이 공식과 다르다": a count against its formula, computed here from
    P and N (P + (N - 1) with the cache, N P + N (N - 1) / 2 without); the words print the
    record's counts (count.py's sentence)."""
    count = records["count"]
    p, n = count.prompt_len, count.new_tokens
    with_cache = p + n - 1
    without_cache = n * p + n * (n - 1) // 2
    return count.fed_with_cache != with_cache or count.fed_without_cache != without_cache


# --- sweep.json -------------------------------------------------------------------------------


def clocked_uncached(sweep, new_tokens: int) -> int:
    return sum(seconds is not None for seconds in sweep.steps.without_cache_s[:new_tokens])


def sweep_longest_estimate(records, about) -> bool:
    """ "캐시 없는 단계 N개 중 K개만 재고 나머지를 채운 어림"."""
    sweep = records["sweep"]
    clocked = clocked_uncached(sweep, about["new_tokens"])
    return clocked == about["clocked"] and clocked < about["new_tokens"]


def sweep_spreads(records, about) -> tuple[tuple[float, float], tuple[float, float]] | None:
    """The sweep's runs' and steps' spreads as the record holds them, None where the claim cites
    others."""
    sweep = records["sweep"]
    runs = (sweep.cv_with_cache, sweep.cv_without_cache)
    steps = (sweep.cv_with_cache_within_runs, sweep.cv_without_cache_within_runs)
    cited = (
        about["cv_with_cache"],
        about["cv_without_cache"],
        about["cv_with_cache_within_runs"],
        about["cv_without_cache_within_runs"],
        about["noisy_cv"],
        about["step_noisy_cv"],
    )
    held = (*runs, *steps, sweep.noisy_cv, sweep.step_noisy_cv)
    if not all(close(a, b) for a, b in zip(cited, held)):
        return None
    return runs, steps


def sweep_runs_spread_over(records, about) -> bool:
    """ "생성 N회의 변동계수가 ... 로 {noisy_cv}를 넘는 쪽이 있다"."""
    spreads = sweep_spreads(records, about)
    return spreads is not None and max(spreads[0]) > records["sweep"].noisy_cv


def sweep_steps_spread_over(records, about) -> bool:
    """ "한 생성 안의 단계 시간의 변동계수가 ... 로 {step_noisy_cv}를 넘는 쪽이 있다"."""
    spreads = sweep_spreads(records, about)
    return spreads is not None and max(spreads[1]) > records["sweep"].step_noisy_cv


def sweep_two_bands(records, about) -> bool:
    """ "캐시 경로의 디코드 한 단계는 두 무리로 갈렸다: 약 A(단계의 a%)와 약 B(b%)": the cached
    steps after the prefill split so (split_in_two)."""
    return split_in_two(records["sweep"].steps.with_cache_s[1:], about["bands"])


# --- serve.json -------------------------------------------------------------------------------


def rates(serve) -> list[tuple[int, float]]:
    return [(row.batch, row.batch / row.decode_step_s) for row in serve.batches]


def peak_batch(serve) -> int:
    best = max(rate for _, rate in rates(serve))
    return min(batch for batch, rate in rates(serve) if rate == best)


def serve_decode_spread_over(records, about) -> bool:
    """ "B = ...에서 패스 사이 디코드 한 단계의 변동계수가 X를 넘었다": exactly those batches."""
    serve = records["serve"]
    over = [row.batch for row in serve.batches if cv(row.pass_step_s) > about["threshold"]]
    return list(about["batches"]) == over and bool(over)


def serve_prefill_spread_over(records, about) -> bool:
    """ "B = ...에서 패스 사이 프리필의 변동계수가 X를 넘었다": exactly those batches."""
    serve = records["serve"]
    over = [
        row.batch
        for row in serve.batches
        if row.prefills_s and cv(row.prefills_s) > about["threshold"]
    ]
    return list(about["batches"]) == over and bool(over)


def serve_within_spread_over(records, about) -> bool:
    """ "B = ...에서 한 패스 안의 단계들의 변동계수가 X를 넘었다" (the record's spread within
    the passes around their trend)."""
    serve = records["serve"]
    over = [row.batch for row in serve.batches if row.cv_within_passes > about["threshold"]]
    return list(about["batches"]) == over and bool(over)


def split_in_two(steps: list[float], named: list) -> bool:
    """The sorted steps, cut where the first named share says, jump by 1.5x at the cut, each
    side at least a tenth of them, each side's median the one named."""
    steps = sorted(steps)
    if len(named) != 2 or len(steps) < 4:
        return False
    cut = round(named[0]["share"] * len(steps))
    if not 0 < cut < len(steps):
        return False
    fast, slow = steps[:cut], steps[cut:]
    return (
        steps[cut] >= 1.5 * steps[cut - 1]
        and min(len(fast), len(slow)) >= 0.1 * len(steps)
        and close(named[0]["median_s"], statistics.median(fast))
        and close(named[1]["median_s"], statistics.median(slow))
    )


def serve_cliff_cache(records, about) -> bool:
    """ "장치 캐시를 넘음(추정): L2, ...": each named cache's size lies between the memory the
    step reads at the two batches (every weight and the batch's KV cache)."""
    serve = records["serve"]
    sizes = {level.name: level.bytes for level in serve.caches}
    for cliff in serve.cliffs:
        if (cliff.from_batch, cliff.to_batch) != (about["from_batch"], about["to_batch"]):
            continue
        before = cliff.weight_bytes + cliff.kv_bytes_before
        after = cliff.weight_bytes + cliff.kv_bytes_after
        return bool(about["levels"]) and all(
            name in sizes and before < sizes[name] <= after for name in about["levels"]
        )
    return False


def experts_ends(records, about) -> tuple[float, float] | None:
    experts = [row.experts_touched for row in records["serve"].batches]
    if not experts or None in experts:
        return None
    if not (close(about["first"], experts[0]) and close(about["last"], experts[-1])):
        return None
    return experts[0], experts[-1]


def serve_experts_grow(records, about) -> bool:
    """ "B가 늘면 한 단계가 쓰는 전문가도 늘어난다(a개 → b개)": the largest batch's above the
    smallest's."""
    ends = experts_ends(records, about)
    return ends is not None and ends[1] > ends[0]


def serve_experts_same(records, about) -> bool:
    """ "B가 늘어도 ... a개 그대로였다"."""
    ends = experts_ends(records, about)
    return ends is not None and ends[1] == ends[0]


def serve_two_bands(records, about) -> bool:
    """ "디코드 한 단계가 두 무리로 갈린 배치가 있다: B = x는 약 A(a%)와 약 B(b%)"."""
    by_batch = {row.batch: row for row in records["serve"].batches}
    named = about["banded"]
    return bool(named) and all(
        item["batch"] in by_batch
        and split_in_two(by_batch[item["batch"]].decode_steps_s, item["bands"])
        for item in named
    )


def serve_context_beyond_measured(records, about) -> bool:
    """ "캐시가 M토큰일 때 잰 것이다: 컨텍스트 C토큰에서는 ... 작을 수 있다": C past M."""
    serve = records["serve"]
    return (
        about["context"] == serve.users.context
        and about["measured"] == serve.decode_context
        and serve.users.context > serve.decode_context
    )


# --- same, run ---------------------------------------------------------------------------


def run_course_folder(records, about) -> bool:
    """ "(MiniMind 강의 체크포인트, /opt/mm)": both checkpoints the run read lie in it."""
    folder = PurePosixPath(about["folder"])
    runs = [records["same"].run, next(iter(records["temp"].values())).run]
    return all(PurePosixPath(run.checkpoint).is_relative_to(folder) for run in runs)


def judged(found: Callable[[Mapping], str], word: str) -> Callable[[Mapping, Mapping], bool]:
    return lambda records, about: found(records) == word


ORACLES: dict[str, Callable[[Mapping, Mapping], bool]] = {
    "count.differs_from_formula": count_differs_from_formula,
    "sweep.longest_estimate": sweep_longest_estimate,
    "sweep.runs_spread_over": sweep_runs_spread_over,
    "sweep.steps_spread_over": sweep_steps_spread_over,
    "sweep.two_bands": sweep_two_bands,
    "serve.decode_spread_over": serve_decode_spread_over,
    "serve.prefill_spread_over": serve_prefill_spread_over,
    "serve.within_spread_over": serve_within_spread_over,
    "serve.cliff_cache": serve_cliff_cache,
    "serve.experts_grow": serve_experts_grow,
    "serve.experts_same": serve_experts_same,
    "serve.two_bands": serve_two_bands,
    "serve.context_beyond_measured": serve_context_beyond_measured,
    "run.course_folder": run_course_folder,
}
