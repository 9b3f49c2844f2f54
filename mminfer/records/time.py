"""time.json: median seconds with and without the cache, how far to trust them. Record, facts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from mminfer.records import RunInfo, token_ratio

if TYPE_CHECKING:
    from mminfer.records.fed import Count


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
    with_cache_runs_s: list[float]
    without_cache_runs_s: list[float]
    with_cache_warmup_s: list[float]
    without_cache_warmup_s: list[float]
    threads: int
    cpu_count: int | None
    load_before: list[float] | None  # 1-, 5- and 15-minute load averages
    load_after: list[float] | None
    run: RunInfo


def time_facts(time: Timing, fed: Count) -> dict:
    """time.json and its verdict (see mminfer.timing): ok, noisy, or untrusted."""
    ratio = token_ratio(fed)
    return vars(time) | {
        "token_ratio": ratio,
        "trusted": time.verdict != "untrusted",
        "speedup_below_token_ratio": time.speedup < ratio,
        "took_extra_rounds": time.extra_rounds > 0,
    }
