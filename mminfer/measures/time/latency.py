"""latency.json: what a user waits for, from the time job's own runs. Record, facts, glance.

Every timed run of time.json (warm-ups out) carried a streamer that stamped each of generate's
``put`` calls with the run's own clock (mminfer.timing.clock.StampingStreamer): the time to the
first
new token (TTFT), the gaps between tokens (ITL), the time per output token after the first
(TPOT = (end-to-end - TTFT) / (N - 1)) and the end-to-end time to the last token, per run and
pooled; eval_llm.py's ``[Speed]`` computed its way from the same stamps; the streamer's own cost.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from mminfer.records import AGREEMENTS, Glance, RunInfo, agree
from mminfer.records.claims import Claim, claim
from mminfer.records.interval import Interval, against, look_level, median_interval
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


def growth_claims(latency: Latency) -> dict[str, Claim]:
    """The uncached path's gaps against the context: ``grows``, the last quarter of steps' median
    gap over the first quarter's, past every run's range of the first quarter; ``flat``, not."""
    gaps = latency.without_cache.step_gap_s
    quarter = max(1, len(gaps) // 4)
    first = sorted(gaps[:quarter])[(quarter - 1) // 2]
    last = sorted(gaps[-quarter:])[(quarter - 1) // 2]
    first_high = max(latency.without_cache.step_gap_high_s[:quarter])
    context = latency.without_cache.context
    about = {
        "first_s": first,
        "last_s": last,
        "first_context": context[0],
        "last_context": context[-1],
        "steps": quarter,
    }
    grows = len(gaps) >= 2 and last > first_high
    return {
        "grows": claim("latency.uncached_gap_grows", grows, **about),
        "flat": claim("latency.uncached_gap_not_grows", not grows, **about),
    }


def agreement_claims(latency: Latency, time: Timing | None) -> dict[str, Claim] | None:
    """The cached TPOT against time.json's per-token time after the prefill, each its runs'
    range: (run seconds - TTFT) / (N - 1) per run; records.agree's three findings."""
    if time is None or latency.new_tokens < 2:
        return None
    path = latency.with_cache
    tpot = [run.tpot_s for run in path.runs]
    after = [
        (seconds - run.ttft_s) / (latency.new_tokens - 1)
        for seconds, run in zip(time.with_cache_runs_s, path.runs)
    ]
    found = agree((min(tpot), max(tpot)), (min(after), max(after)), latency.noisy_cv)
    about = {"tpot_s": path.tpot_s, "after_s": sorted(after)[(len(after) - 1) // 2]}
    return {
        finding: claim(f"latency.tpot_{finding}", found == finding, **about)
        for finding in AGREEMENTS
    }


def speed_claims(latency: Latency) -> dict[str, Claim]:
    """eval_llm's [Speed] at the smallest n against the cached decode rate: ``below``, slower than
    1 / TPOT (the prefill inside it), ``not_below``; ``prefill_most``, the TTFT over half of the
    time to the n-th token."""
    path = latency.with_cache
    first = path.speed[0]
    about = {
        "n": first.n,
        "speed": first.tokens_per_s,
        "decode": path.decode_tokens_per_s,
        "share": first.ttft_share,
    }
    below = first.tokens_per_s < path.decode_tokens_per_s
    return {
        "below": claim("latency.speed_below_decode", below, **about),
        "not_below": claim("latency.speed_not_below_decode", not below, **about),
        "prefill_most": claim("latency.prefill_most", first.ttft_share > 0.5, **about),
    }


def latency_facts(latency: Latency, time: Timing | None = None) -> dict:
    """latency.json's figures and its sentences' claims; ``estimate`` where the time job's
    verdict is noisy, ``trusted`` unless untrusted. Where sweep.json's steps pass the TPOT limit
    is the report's join (mminfer.report.joins): ``crossing`` None here."""
    float32_cpu = latency.run.dtype == "float32" and latency.run.device == "cpu"
    return vars(latency) | {
        "trusted": latency.verdict != "untrusted",
        "estimate": latency.verdict == "noisy",
        "growth": growth_claims(latency),
        "crossing": None,
        "agreement": agreement_claims(latency, time),
        "speeds": speed_claims(latency),
        "float32_cpu": float32_cpu,
        "cost_claims": cost_claims(latency),
    }


def cost_claims(latency: Latency) -> dict[str, Claim]:
    """The cached runs with the streamer (every timed one) against those without it, each their
    range, by records.agree with the time job's noise threshold: ``meet``, ``within_noise`` (the
    streamer's cost not told from the runs' noise) or ``apart``, then ``adds`` (the runs with it
    slower: its cost, the paired median, and its share of the cached run) or ``apart_faster``
    (the runs with it faster: the machine's drift, not the streamer's)."""
    cost = latency.cost
    streamed = [run.seconds for run in latency.with_cache.runs]
    found = agree(
        (min(streamed), max(streamed)),
        (min(cost.without_streamer_s), max(cost.without_streamer_s)),
        latency.noisy_cv,
    )
    about = {
        "per_run_s": cost.per_run_s,
        "share": cost.per_run_s / cost.with_cache_s,
        "with_low_s": min(streamed),
        "with_high_s": max(streamed),
        "without_low_s": min(cost.without_streamer_s),
        "without_high_s": max(cost.without_streamer_s),
        "rounds": cost.rounds,
    }
    found_claims = {
        finding: claim(f"latency.cost_{finding}", found == finding, **about)
        for finding in AGREEMENTS
    }
    return found_claims | {
        "adds": claim("latency.cost_adds", found == "apart" and cost.per_run_s > 0, **about),
        "apart_faster": claim(
            "latency.cost_apart_faster", found == "apart" and cost.per_run_s <= 0, **about
        ),
    }


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
)
