"""Step 3: how long greedy generation takes with and without the cache, and how far to trust it.

The two methods are timed as an interleaved A/B job (mminfer.abtiming): warm-ups of both, then
rounds of (with cache, without cache) so that a burst of load lands on both; every run kept;
medians and spreads; more rounds while the cache side is not faster or a spread is over NOISY_CV;
what stays in doubt is written down with threads and load average. The clock is the device's
(mminfer.clock: on CUDA the device is synchronized before every read).
"""

from __future__ import annotations

import torch

from mminfer.abtiming import A_NOT_FASTER, A_SPREAD, B_SPREAD, ABTiming, Sides, time_ab
from mminfer.generation import GREEDY
from mminfer.records import RunInfo
from mminfer.records.time import Timing

CACHE_SIDES = Sides(  # the cache as side a; a cache side not faster makes a timing "untrusted"
    doubts={
        A_NOT_FASTER: "cache_not_faster",
        A_SPREAD: "with_cache_spread",
        B_SPREAD: "without_cache_spread",
    },
    contradictions=("cache_not_faster",),
)
ORDER = "interleaved: warm-ups of both, then rounds of (with cache, without cache)"


def time_cache(
    *,
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

    def generate(use_cache: bool) -> None:
        model.generate(input_ids, max_new_tokens=new_tokens, use_cache=use_cache, **GREEDY)

    timed = time_ab(
        work=generate,
        sides=CACHE_SIDES,
        device=device,
        warmup=warmup,
        runs=runs,
        max_runs=max_runs,
    )
    return timing_record(timed=timed, prompt_len=len(prompt_ids), new_tokens=new_tokens, run=run)


def timing_record(*, timed: ABTiming, prompt_len: int, new_tokens: int, run: RunInfo) -> Timing:
    """time.json's record from the A/B timing, the cache as side a.

    with_cache_s, without_cache_s and speedup (without / with) first, then every run, the spreads,
    the verdict and the conditions: threads, cores, load average before and after, the clock.
    """
    return Timing(
        with_cache_s=timed.a_s,
        without_cache_s=timed.b_s,
        speedup=timed.b_s / timed.a_s,
        prompt_len=prompt_len,
        new_tokens=new_tokens,
        order=ORDER,
        cv_with_cache=timed.cv_a,
        cv_without_cache=timed.cv_b,
        with_cache_runs_s=timed.a_runs_s,
        without_cache_runs_s=timed.b_runs_s,
        with_cache_warmup_s=timed.a_warmup_s,
        without_cache_warmup_s=timed.b_warmup_s,
        run=run,
        **timed.shared(),  # the rounds, doubts, verdict and conditions, under these names
    )
