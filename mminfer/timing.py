"""Step 3: how long greedy generation takes with and without the cache, and how far to trust it.

Like an A/B benchmark harness, so that a busy machine shows up as noise, not as a result:
warm-ups of both methods, then rounds of (with cache, without cache) so a burst of load lands on
both; every run kept; medians and spreads (coefficient of variation); more rounds while the cache
side is not faster or a spread is over NOISY_CV; what stays in doubt is written down with threads
and load average. On CUDA the device is synchronized before every clock read.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable

import torch

from mminfer.greedy import GREEDY
from mminfer.records import RunInfo
from mminfer.records.time import Timing

NOISY_CV = 0.10  # a method whose runs spread more than this is "noisy"
# Single steps jitter more than whole runs or their medians do: on a quiet 2-core machine the
# course model's decode steps spread up to about 10% within a pass, beside a busy loop 20-100%.
STEP_NOISY_CV = 0.20  # steps within a run or pass spreading more than this (cv_within_runs)
CONTRADICTIONS = ("cache_not_faster",)  # doubts that make a timing "untrusted"


def synced_clock(device) -> Callable[[], float]:
    """time.perf_counter() after the device has finished its queued work.

    Whether to synchronise is decided here, once, not at every read inside the timed region.
    """
    if torch.device(device).type != "cuda":
        return time.perf_counter

    def clock() -> float:
        torch.cuda.synchronize(device)
        return time.perf_counter()

    return clock


def load_average() -> list[float] | None:
    """The machine's 1-, 5- and 15-minute load averages (None where the system has none)."""
    try:
        return [round(value, 2) for value in os.getloadavg()]
    except (AttributeError, OSError):  # no getloadavg (Windows), or the system cannot tell
        return None


def coefficient_of_variation(values: list[float]) -> float:
    """Sample standard deviation over the mean; 0 for fewer than two values."""
    return statistics.stdev(values) / statistics.mean(values) if len(values) > 1 else 0.0


MAD_TO_SD = 1.4826  # a normal distribution's standard deviation over its median absolute deviation


def cv_around_trend(steps: list[float]) -> float:
    """A robust coefficient of variation of consecutive steps around their straight-line trend.

    A step that legitimately grows (the context one token longer each step) is not noise: each
    step is taken less the least-squares line's rise from the middle step, so only the jitter
    around the line is judged. The spread is 1.4826 x the median absolute deviation over the
    median (the standard deviation's robust twin): a quiet machine's few lone spikes (a garbage
    collection, a timer interrupt) leave it small, while a busy machine, which jolts many of the
    steps, shows. 0 for fewer than three steps (a line fits any two).
    """
    if len(steps) < 3:
        return 0.0
    positions = list(range(len(steps)))
    slope, _ = statistics.linear_regression(positions, steps)
    middle = (len(steps) - 1) / 2
    level = [seconds - slope * (position - middle) for position, seconds in zip(positions, steps)]
    center = statistics.median(level)
    if center <= 0:
        return 0.0
    deviation = statistics.median(abs(value - center) for value in level)
    return MAD_TO_SD * deviation / center


def cv_within_runs(runs: list[list[float]]) -> float:
    """The median over runs (or passes) of each one's :func:`cv_around_trend`.

    A steady busy loop can slow every run alike, so that the runs agree while the steps inside
    each jump about: this is the spread that sees it. The median, so that one hiccup in one run
    does not decide it.
    """
    return statistics.median(cv_around_trend(steps) for steps in runs)


def doubts_about(with_cache_s: list[float], without_cache_s: list[float]) -> list[str]:
    """Why these runs cannot be taken at face value (empty when they can)."""
    doubts = []
    if statistics.median(with_cache_s) >= statistics.median(without_cache_s):
        doubts.append("cache_not_faster")
    if coefficient_of_variation(with_cache_s) > NOISY_CV:
        doubts.append("with_cache_spread")
    if coefficient_of_variation(without_cache_s) > NOISY_CV:
        doubts.append("without_cache_spread")
    return doubts


def alternate(measure: Callable[[bool], object], rounds: int) -> dict[bool, list]:
    """``rounds`` rounds of (with cache, without cache): {use_cache: [each round's measure]}."""
    results = {True: [], False: []}
    for _ in range(rounds):
        for use_cache in (True, False):
            results[use_cache].append(measure(use_cache))
    return results


def interleaved_runs(
    measure: Callable[[bool], float], warmup: int, runs: int, max_runs: int
) -> dict:
    """Warm-ups of both methods, then ``runs`` rounds of (with cache, without cache), then more.

    More rounds follow while :func:`doubts_about` finds a doubt, up to ``max_runs`` runs per
    method. ``measure(use_cache)`` returns one generation's seconds.
    """
    warmup_s = alternate(measure, warmup)
    runs_s = alternate(measure, runs)
    while len(runs_s[True]) < max_runs and doubts_about(runs_s[True], runs_s[False]):
        for use_cache, seconds in alternate(measure, 1).items():
            runs_s[use_cache] += seconds
    return {
        "with_cache_runs_s": runs_s[True],
        "without_cache_runs_s": runs_s[False],
        "with_cache_warmup_s": warmup_s[True],
        "without_cache_warmup_s": warmup_s[False],
    }


def verdict_of(doubts: list[str], contradictions: tuple[str, ...] = CONTRADICTIONS) -> str:
    """The verdict on a timing: "ok", "noisy" or "untrusted".

    "untrusted" for a doubt that contradicts physics (``contradictions``; here the cache side not
    faster: on a correct implementation only a busy machine does that), "noisy" for any other doubt
    (a spread over NOISY_CV: of the runs, or of the steps within them), "ok" without one. The
    serve and sweep jobs judge their clocked steps by this same rule, each with its own
    contradictions.
    """
    if any(doubt in contradictions for doubt in doubts):
        return "untrusted"
    if doubts:
        return "noisy"
    return "ok"


def time_cache(
    model,
    prompt_ids: list[int],
    new_tokens: int,
    warmup: int,
    runs: int,
    max_runs: int,
    device,
    run: RunInfo,
) -> Timing:
    """time.json: time greedy generation with and without the cache (see the module's docstring)."""
    input_ids = torch.tensor([prompt_ids], dtype=torch.long, device=device)
    clock = synced_clock(device)

    def measure(use_cache: bool) -> float:
        start = clock()
        model.generate(input_ids, max_new_tokens=new_tokens, use_cache=use_cache, **GREEDY)
        return clock() - start

    load_before = load_average()
    measured = interleaved_runs(measure, warmup, runs, max_runs)
    return timing_record(
        measured, len(prompt_ids), new_tokens, warmup, runs, max_runs, load_before, run
    )


def timing_record(
    measured: dict[str, list[float]],
    prompt_len: int,
    new_tokens: int,
    warmup: int,
    runs: int,
    max_runs: int,
    load_before: list[float] | None,
    run: RunInfo,
) -> Timing:
    """time.json's record from the runs of :func:`interleaved_runs`.

    with_cache_s, without_cache_s and speedup (without / with) first, then every run, the spreads,
    the verdict and the conditions: threads, cores, load average before and now.
    """
    with_cache = measured["with_cache_runs_s"]
    without_cache = measured["without_cache_runs_s"]
    doubts = doubts_about(with_cache, without_cache)
    return Timing(
        with_cache_s=statistics.median(with_cache),
        without_cache_s=statistics.median(without_cache),
        speedup=statistics.median(without_cache) / statistics.median(with_cache),
        prompt_len=prompt_len,
        new_tokens=new_tokens,
        warmup=warmup,
        runs=runs,
        max_runs=max(runs, max_runs),
        order="interleaved: warm-ups of both, then rounds of (with cache, without cache)",
        cv_with_cache=coefficient_of_variation(with_cache),
        cv_without_cache=coefficient_of_variation(without_cache),
        runs_done=len(with_cache),
        extra_rounds=len(with_cache) - runs,
        doubts=doubts,
        verdict=verdict_of(doubts),
        noisy_cv=NOISY_CV,
        with_cache_runs_s=with_cache,
        without_cache_runs_s=without_cache,
        with_cache_warmup_s=measured["with_cache_warmup_s"],
        without_cache_warmup_s=measured["without_cache_warmup_s"],
        threads=torch.get_num_threads(),
        cpu_count=os.cpu_count(),
        load_before=load_before,
        load_after=load_average(),
        run=run,
    )
