"""latency.json: what a user waits for, from the time job's own runs (decided in decide.py).

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

from mminfer.records import RunInfo
from mminfer.records.interval import Interval
from mminfer.records.machine import Contention

if TYPE_CHECKING:
    pass

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
