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

from mminfer.records import Glance, RunInfo
from mminfer.records.interval import (
    FAMILY_LEVEL,
    Interval,
    against,
    look_level,
    median_interval,
    paired_ratios,
    ratio_decision,
)
from mminfer.records.machine import Contention
from mminfer.records.sentences import Sentence

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
        against(path.ttft_interval, latency.ttft_limit_s),
        against(path.tpot_interval, latency.tpot_limit_s),
    }
    if found == {"below"}:
        return "within"
    return "over" if "above" in found else "undecided"


def limits_in_runs(latency: Latency, time: Timing, name: str) -> str:
    """:func:`limits` recomputed from the runs' stamps (TTFT the first new token's put, TPOT the
    rest over N - 1), their intervals at the time job's per-look level."""
    level = look_level(time.runs, time.max_runs)
    runs = paths(latency)[name].runs
    ttft = [run.stamps_s[1] for run in runs]
    tpot = [(run.stamps_s[-1] - run.stamps_s[1]) / max(len(run.stamps_s) - 2, 1) for run in runs]
    found = {
        against(median_interval(ttft, level), latency.ttft_limit_s),
        against(median_interval(tpot, level), latency.tpot_limit_s),
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


def latency_facts(latency: Latency, time: Timing | None = None) -> dict:
    """latency.json's figures; ``estimate`` where the time job's verdict is noisy, ``trusted``
    unless untrusted. Where sweep.json's steps pass the TPOT limit is the report's join
    (mminfer.report.joins): ``crossing`` None here. Its sentences are :data:`SENTENCES`."""
    float32_cpu = latency.run.dtype == "float32" and latency.run.device == "cpu"
    return vars(latency) | {
        "trusted": latency.verdict != "untrusted",
        "estimate": latency.verdict == "noisy",
        "crossing": None,
        "float32_cpu": float32_cpu,
    }


# Each run's figures, from the record's summaries (the predicates) or recomputed from the run's
# stamps (the checks): stamps_s[0] the prompt's put, [1] the first new token's.
def ttft_of(run: RunLatency, stamps: bool) -> float:
    return run.stamps_s[1] if stamps else run.ttft_s


def tpot_of(run: RunLatency, stamps: bool) -> float:
    if not stamps:
        return run.tpot_s
    return (run.stamps_s[-1] - run.stamps_s[1]) / max(len(run.stamps_s) - 2, 1)


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
    return FAMILY_LEVEL if time is None else look_level(time.runs, time.max_runs)


def uncached_gap(latency: Latency, time: Timing | None, stamps: bool = False) -> str | None:
    """latency.uncached_gap: "grows" where the uncached runs' last steps over their first lie
    wholly above 1, else "undecided"; None for fewer than two gaps."""
    if latency.new_tokens < 3:
        return None
    found = against(median_interval(gap_ratios(latency), level_of(time)), 1.0)
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
    found = median_interval(ratios, look_level(time.runs, time.max_runs))
    grows = found.decisive and found.low > 1.0
    return chosen == ("grows" if grows else "undecided")


def ttft_paths(latency: Latency, time: Timing | None, stamps: bool = False) -> str:
    """latency.ttft_paths: the uncached over the cached TTFT, round by round (the same prefill
    of P tokens): "same" within the noise threshold, "differs", or "undecided"."""
    ratios = paired_ratios(
        [ttft_of(run, stamps) for run in latency.without_cache.runs],
        [ttft_of(run, stamps) for run in latency.with_cache.runs],
    )
    found = ratio_decision(median_interval(ratios, level_of(time)))
    return {"same": "same", "undecided": "undecided"}.get(found, "differs")


def tpot_agrees(latency: Latency, time: Timing | None, stamps: bool = False) -> str | None:
    """latency.tpot_agrees: the cached TPOT over time.json's time after the first token per
    token ((run seconds - TTFT) / (N - 1)), run by run: "agrees" within the noise threshold,
    "apart", "undecided"; None without time.json, or where its runs are not these (another
    count of runs: a latency.json from another time job)."""
    runs = latency.with_cache.runs
    if time is None or latency.new_tokens < 2 or len(time.with_cache_runs_s) != len(runs):
        return None
    after = [
        (seconds - ttft_of(run, stamps)) / (latency.new_tokens - 1)
        for seconds, run in zip(time.with_cache_runs_s, runs)
    ]
    ratios = paired_ratios([tpot_of(run, stamps) for run in runs], after)
    found = ratio_decision(median_interval(ratios, level_of(time)))
    return {"same": "agrees", "undecided": "undecided"}.get(found, "apart")


def speed(latency: Latency, time: Timing | None, stamps: bool = False) -> str | None:
    """latency.speed: eval_llm's [Speed] at the smallest n over the decode rate (1 / TPOT), run
    by run: "below", "not_below" (wholly above 1), "undecided"; None without a [Speed]."""
    path = latency.with_cache
    if not path.speed:
        return None
    n = path.speed[0].n
    ratios = [
        (n / run.stamps_s[n] if stamps else speed_run) * tpot_of(run, stamps)
        for run, speed_run in zip(path.runs, path.speed[0].runs_tokens_per_s)
    ]
    found = against(median_interval(ratios, level_of(time)), 1.0)
    return {"below": "below", "above": "not_below"}.get(found, "undecided")


def prefill_most(latency: Latency, time: Timing | None, stamps: bool = False) -> bool:
    """latency.prefill_most: the TTFT's share of the time to the n-th token lies wholly above
    half, run by run."""
    path = latency.with_cache
    if not path.speed:
        return False
    n = path.speed[0].n
    shares = [ttft_of(run, stamps) / run.stamps_s[n] for run in path.runs]
    return against(median_interval(shares, level_of(time)), 0.5) == "above"


def cost(latency: Latency, stamps: bool = False) -> str:
    """latency.cost: the paired rounds' cached run with the streamer over the one without it:
    "adds", "faster", "same" or "undecided" (one look, at FAMILY_LEVEL)."""
    cost = latency.cost
    runs = latency.with_cache.runs[: cost.rounds]
    with_s = [run.seconds for run in runs] if stamps else cost.with_streamer_s
    ratios = paired_ratios(with_s, cost.without_streamer_s)
    if not ratios:
        return "undecided"
    found = ratio_decision(median_interval(ratios, FAMILY_LEVEL))
    return {"above": "adds", "below": "faster"}.get(found, found)


def latency_glance(latency: Latency) -> Glance:
    """``lesson``: the sentence latency.lesson's variant (:func:`lesson`)."""
    return Glance(lesson=lesson(latency), verdict=latency.verdict, terms=("ttft", "tpot", "itl"))


LIMITS = {
    "within": "대화형 한계 안이다",
    "over": "대화형 한계를 넘는다",
    "undecided": "실행 {{ latency.runs_done }}회로는 대화형 한계 안인지 가를 수 없다",
}
CACHED = (
    "캐시를 쓰면 첫 토큰까지(TTFT) {{ latency.with_cache.ttft_interval|ms_in }}, 그 뒤"
    " 토큰마다(TPOT) {{ latency.with_cache.tpot_interval|ms_in }}로 "
)
UNCACHED = "캐시 없이는 TPOT {{ latency.without_cache.tpot_interval|ms_in }}로 "

# The section's sentences (mminfer.records.sentences): latency.md.j2 asks for them.
SENTENCES = (
    Sentence(
        "latency.cached_limits",
        holds=lambda latency: limits(latency, "with_cache"),
        words={variant: CACHED + words + "." for variant, words in LIMITS.items()},
        check=lambda latency, time, chosen: limits_in_runs(latency, time, "with_cache") == chosen,
    ),
    Sentence(
        "latency.uncached_limits",
        holds=lambda latency: limits(latency, "without_cache"),
        words={variant: UNCACHED + words + "." for variant, words in LIMITS.items()},
        check=lambda latency, time, chosen: (
            limits_in_runs(latency, time, "without_cache") == chosen
        ),
    ),
    Sentence(
        "latency.lesson",
        holds=lesson,
        words={
            "untrusted": "시간을 믿을 수 없다: 조용한 기계에서 다시 잴 것",
            "both_within": "두 경로 모두 대화형 한계 안이다",
            "cached_within": "캐시를 쓸 때만 대화형 한계 안이다",
            "over": "캐시를 써도 대화형 한계를 넘는다",
            "undecided": "실행으로는 대화형 한계 안인지 가를 수 없다",
        },
        check=lesson_in_runs,
    ),
    Sentence(
        "latency.uncached_gap",
        holds=lambda latency, time: uncached_gap(latency, time),
        words={
            "grows": (
                "캐시 없는 간격은 문맥과 함께 는다: 실행마다 끝 4분의 1 단계의 간격이 첫 4분의"
                " 1보다 길다(단계의 중앙값 {{ latency.without_cache.step_gap_s[0]|ms }} →"
                " {{ latency.without_cache.step_gap_s[-1]|ms }}). 단계마다 넣는 토큰이 P + k개이기"
                " 때문이다(`count.json`의 공식)."
            ),
            "undecided": "캐시 없는 간격이 문맥과 함께 느는지는 이 실행들로는 가를 수 없다.",
        },
        check=gap_in_runs,
    ),
    Sentence(
        "latency.ttft_paths",
        holds=lambda latency, time: ttft_paths(latency, time),
        words={
            "same": (
                "두 경로의 TTFT는 같은 P토큰의 프리필이라, 실행마다 짝지은 비가 잡음 문턱(5 %)"
                " 안에서 같았다."
            ),
            "differs": (
                "두 경로의 TTFT는 같은 P토큰의 프리필인데 실행마다 짝지은 비로 갈린다(캐시 사용"
                " {{ latency.with_cache.ttft_interval|ms_in }}, 미사용"
                " {{ latency.without_cache.ttft_interval|ms_in }}):"
                "{% if latency.contention and latency.contention.busy %} 기계가 바빴으니 부하를"
                " 먼저 의심할 것.{% else %} 방법은 같아야 하므로 이 측정으로는 까닭을 가를 수"
                " 없다.{% endif %}"
            ),
            "undecided": (
                "두 경로의 TTFT(같은 P토큰의 프리필)가 같은지는 이 실행들로는 가를 수 없다."
            ),
        },
        check=lambda latency, time, chosen: ttft_paths(latency, time, stamps=True) == chosen,
    ),
    Sentence(
        "latency.tpot_agrees",
        holds=lambda latency, time: tpot_agrees(latency, time),
        words={
            "agrees": (
                "캐시 사용 TPOT는 `time.json`의 실행 시간에서 TTFT를 뺀 토큰당 시간과 실행마다"
                " 잡음 문턱(5 %) 안에서 맞는다."
            ),
            "apart": (
                "캐시 사용 TPOT는 `time.json`의 실행 시간에서 TTFT를 뺀 토큰당 시간과 실행마다"
                " **어긋난다**: 마지막 토큰 뒤에 걸린 시간이 있다."
            ),
            "undecided": (
                "캐시 사용 TPOT가 `time.json`의 실행 시간에서 TTFT를 뺀 토큰당 시간과 맞는지는"
                " 이 실행들로는 가를 수 없다."
            ),
        },
        check=lambda latency, time, chosen: tpot_agrees(latency, time, stamps=True) == chosen,
    ),
    Sentence(
        "latency.speed",
        holds=lambda latency, time: speed(latency, time),
        words={
            "below": (
                "eval_llm.py식 `[Speed]`는 n = {{ latency.with_cache.speed[0].n }}에서"
                " {{ latency.with_cache.speed[0].tokens_per_s|fmt('.0f') }} tok/s로 실행마다"
                " 디코드 속도(1 ÷ TPOT)보다 느리다: 첫 토큰까지의 프리필이 그 시간 안에 있다."
            ),
            "not_below": (
                "eval_llm.py식 `[Speed]`는 n = {{ latency.with_cache.speed[0].n }}에서도"
                " 디코드 속도 이상이다."
            ),
            "undecided": (
                "eval_llm.py식 `[Speed]`가 디코드 속도보다 느린지는 이 실행들로는 가를 수 없다."
            ),
        },
        check=lambda latency, time, chosen: speed(latency, time, stamps=True) == chosen,
    ),
    Sentence(
        "latency.prefill_most",
        holds=lambda latency, time: prefill_most(latency, time),
        words="그 시간의 절반 넘게가 첫 토큰까지다.",
        check=lambda latency, time: prefill_most(latency, time, stamps=True),
    ),
    Sentence(
        "latency.cost",
        holds=lambda latency: cost(latency),
        words={
            "adds": "`streamer`는 캐시 사용 실행을 라운드마다 짝지은 비로 느리게 한다.",
            "faster": (
                "`streamer` 없는 실행이 오히려 느려, 그 차이는 기계의 흔들림이지 `streamer`의"
                " 몫이 아니다."
            ),
            "same": "그 차이는 잡음 문턱(5 %) 안이다.",
            "undecided": "라운드 {{ latency.cost.rounds }}회로는 그 몫을 가를 수 없다.",
        },
        check=lambda latency, chosen: cost(latency, stamps=True) == chosen,
    ),
)
