"""The oracles of latency.json's claims, from the runs' raw stamps (each put, from the run's start)
and time.json's and sweep.json's raw runs and steps, never the facts' summaries.
``ORACLES[key](records, about)``: tests/oracles.py merges them."""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Callable, Mapping


def close(a, b) -> bool:
    return a is not None and b is not None and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-15)


def token_stamps(run) -> list[float]:
    return run.stamps_s[1:]  # [0] is the prompt's put


def ttft(run) -> float:
    return token_stamps(run)[0]


def tpot(run) -> float:
    tokens = token_stamps(run)
    return (tokens[-1] - tokens[0]) / (len(tokens) - 1)


def gaps(run) -> list[float]:
    tokens = token_stamps(run)
    return [b - a for a, b in itertools.pairwise(tokens)]


def path(records, name):
    return getattr(records["latency"], name)


def step_gaps(records) -> list[list[float]]:
    """The uncached path's gaps per step, every run's."""
    return [list(step) for step in zip(*(gaps(run) for run in path(records, "without_cache").runs))]


def uncached_gap_grows(records, about) -> bool:
    """ "캐시 없는 간격은 문맥과 함께 는다: 첫 k단계의 중앙값 a에서 끝 k단계 b": the last k steps'
    median gap (each step's median over the runs) past every run's gap in the first k steps."""
    steps = step_gaps(records)
    k = about["steps"]
    medians = [statistics.median(step) for step in steps]
    first = statistics.median_low(medians[:k])
    last = statistics.median_low(medians[-k:])
    slowest_first = max(gap for step in steps[:k] for gap in step)
    latency = records["latency"]
    return (
        close(about["first_s"], first)
        and close(about["last_s"], last)
        and last > slowest_first
        and about["first_context"] == latency.prompt_len + 1
        and about["last_context"] == latency.prompt_len + len(steps)
    )


def uncached_gap_not_grows(records, about) -> bool:
    """ "… 느는지는 이 실행의 범위로는 가를 수 없다": the growth above does not hold."""
    steps = step_gaps(records)
    k = about["steps"]
    medians = [statistics.median(step) for step in steps]
    last = statistics.median_low(medians[-k:])
    return len(steps) < 2 or last <= max(gap for step in steps[:k] for gap in step)


def clocked_uncached(records) -> list[tuple[int, float]]:
    return [
        (step, seconds)
        for step, seconds in enumerate(records["sweep"].steps.without_cache_s)
        if seconds is not None
    ]


def sweep_crosses(records, about) -> bool:
    """ "… 캐시 없는 단계는 N = n(문맥 c)에서 s로 TPOT 한계를 처음 넘었다"."""
    limit = records["latency"].tpot_limit_s
    over = [(step, s) for step, s in clocked_uncached(records) if s > limit]
    if not over:
        return False
    step, seconds = over[0]
    sweep = records["sweep"]
    return (
        about["new_tokens"] == step + 1
        and about["context"] == sweep.prompt_len + step
        and close(about["step_s"], seconds)
        and sweep.verdict != "untrusted"
    )


def sweep_never_crosses(records, about) -> bool:
    """ "… N = n(문맥 c)까지 TPOT 한계를 넘지 않았다": no clocked uncached step over the limit,
    n the last clocked one."""
    limit = records["latency"].tpot_limit_s
    clocked = clocked_uncached(records)
    return (
        bool(clocked)
        and all(s <= limit for _, s in clocked)
        and about["new_tokens"] == clocked[-1][0] + 1
    )


def tpot_ranges(records):
    latency = records["latency"]
    runs = latency.with_cache.runs
    tpots = [tpot(run) for run in runs]
    after = [
        (seconds - ttft(run)) / (latency.new_tokens - 1)
        for seconds, run in zip(records["time"].with_cache_runs_s, runs)
    ]
    return (min(tpots), max(tpots)), (min(after), max(after)), latency.noisy_cv


def tpot_finding(finding: str) -> Callable:
    def oracle(records, about) -> bool:
        """ "캐시 사용 TPOT는 time.json의 … 토큰당 시간과 맞는다 / 어긋난다": the two ranges over
        the runs overlap, lie within the noise threshold, or further apart."""
        one, other, relative = tpot_ranges(records)
        lower, upper = sorted([one, other])
        if upper[0] <= lower[1]:
            found = "meet"
        elif upper[0] - lower[1] <= relative * lower[1]:
            found = "within_noise"
        else:
            found = "apart"
        return found == finding

    return oracle


def speed_at(records, n: int) -> tuple[float, float]:
    """eval_llm's [Speed] for the first n tokens (median over the runs) and 1 / TPOT (median)."""
    runs = records["latency"].with_cache.runs
    speed = statistics.median(n / token_stamps(run)[n - 1] for run in runs)
    decode = 1 / statistics.median(tpot(run) for run in runs)
    return speed, decode


def speed_below_decode(records, about) -> bool:
    """ "[Speed]는 n에서 s tok/s로 디코드 속도 d tok/s보다 느리다"."""
    speed, decode = speed_at(records, about["n"])
    return (
        math.isclose(about["speed"], speed, rel_tol=1e-9)
        and math.isclose(about["decode"], decode, rel_tol=1e-9)
        and speed < decode
    )


def speed_not_below_decode(records, about) -> bool:
    speed, decode = speed_at(records, about["n"])
    return speed >= decode


def prefill_most(records, about) -> bool:
    """ "(그 시간의 x%가 첫 토큰까지다)", said as more than half: the median run's (by its n-th
    token) TTFT over half of its time to the n-th token."""
    runs = records["latency"].with_cache.runs
    n = about["n"]
    middle = sorted(runs, key=lambda run: token_stamps(run)[n - 1])[(len(runs) - 1) // 2]
    share = ttft(middle) / token_stamps(middle)[n - 1]
    return math.isclose(about["share"], share, rel_tol=1e-9) and share > 0.5


def cost_ranges(records) -> tuple[tuple[float, float], tuple[float, float], float, float]:
    """(the cached runs with the streamer, low and high; those without it; the noise threshold;
    the paired rounds' median difference, with - without) from the time job's own seconds."""
    latency = records["latency"]
    cost = latency.cost
    streamed = [run.seconds for run in latency.with_cache.runs]
    paired = [run.seconds for run in latency.with_cache.runs[: cost.rounds]]
    differences = [a - b for a, b in zip(paired, cost.without_streamer_s)]
    without = cost.without_streamer_s
    return (
        (min(streamed), max(streamed)),
        (min(without), max(without)),
        latency.noisy_cv,
        statistics.median(differences),
    )


def cost_found(records) -> str:
    """meet (the ranges overlap), within_noise (apart by at most the threshold of the lower
    end), apart."""
    one, other, relative, _ = cost_ranges(records)
    lower, upper = sorted([one, other])
    if upper[0] <= lower[1]:
        return "meet"
    if upper[0] - lower[1] <= relative * lower[1]:
        return "within_noise"
    return "apart"


def cost_finding(finding: str) -> Callable[[Mapping, Mapping], bool]:
    """ "`streamer` 없는 실행(a)이 단 실행들의 범위(b) 안이라 ... 가려지지 않는다" and its kin:
    the ranges named as the records give them."""

    def oracle(records, about) -> bool:
        one, other, _, _ = cost_ranges(records)
        return (
            cost_found(records) == finding
            and (about["with_low_s"], about["with_high_s"]) == one
            and (about["without_low_s"], about["without_high_s"]) == other
        )

    return oracle


def cost_adds(records, about) -> bool:
    """ "`streamer`가 캐시 사용 실행에 x%를 더한다": apart, the runs with it slower; x the paired
    median over the cached runs' median."""
    _, _, _, per_run = cost_ranges(records)
    cached = statistics.median(run.seconds for run in records["latency"].with_cache.runs)
    return (
        cost_found(records) == "apart"
        and per_run > 0
        and math.isclose(about["share"], per_run / cached, rel_tol=1e-6, abs_tol=1e-12)
    )


def cost_apart_faster(records, about) -> bool:
    """ "`streamer` 없는 실행이 오히려 느려": apart, the paired median at or under zero."""
    _, _, _, per_run = cost_ranges(records)
    return cost_found(records) == "apart" and per_run <= 0


ORACLES: dict[str, Callable[[Mapping, Mapping], bool]] = {
    "latency.uncached_gap_grows": uncached_gap_grows,
    "latency.uncached_gap_not_grows": uncached_gap_not_grows,
    "latency.sweep_crosses": sweep_crosses,
    "latency.sweep_never_crosses": sweep_never_crosses,
    "latency.tpot_meet": tpot_finding("meet"),
    "latency.tpot_within_noise": tpot_finding("within_noise"),
    "latency.tpot_apart": tpot_finding("apart"),
    "latency.speed_below_decode": speed_below_decode,
    "latency.speed_not_below_decode": speed_not_below_decode,
    "latency.prefill_most": prefill_most,
    "latency.cost_meet": cost_finding("meet"),
    "latency.cost_within_noise": cost_finding("within_noise"),
    "latency.cost_apart": cost_finding("apart"),
    "latency.cost_adds": cost_adds,
    "latency.cost_apart_faster": cost_apart_faster,
}
