"""time.json: median seconds with and without the cache, how far to trust them. The record.

Beside the two sides, the time job times a third in the same rounds: the narrow model's cached
generate (mminfer.model.narrow: the same class at minimal width), once after each timed round.
Divided by that round's cached run, it gives a lower bound of the cached path's share that is
fixed cost per call (``fixed_share_runs``). What the runs decide is decide.py's, beside it.
"""

from __future__ import annotations

from dataclasses import dataclass

from mminfer.records import RunInfo
from mminfer.records.interval import Interval
from mminfer.records.machine import Contention


@dataclass
class Timing:
    """time.json: median seconds of each method after warm-ups, and how far to trust them."""

    with_cache_s: float
    without_cache_s: float
    speedup: float  # without / with
    with_cache_interval: Interval  # the median and its interval (mminfer.records.interval)
    without_cache_interval: Interval
    speedup_interval: Interval  # of the per-round speedups (without / with, round by round)
    cache_faster: str  # decide.cache_faster over the runs: "yes", "no", "same" or "undecided"
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
