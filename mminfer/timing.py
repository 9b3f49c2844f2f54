"""Step 3: how long greedy generation takes with and without the cache.

Each method runs ``warmup`` untimed generations (allocation, first-call costs), then ``runs`` timed
ones; the median of the timed runs is the method's time. On CUDA the device is synchronized before
every clock read, so the clock sees the kernels finish, not just their launch.
"""

from __future__ import annotations

import statistics
import time

import torch


def synchronize(device) -> None:
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize(device)


def time_one_generation(model, input_ids: torch.Tensor, new_tokens: int, use_cache: bool, device) -> float:
    synchronize(device)
    start = time.perf_counter()
    model.generate(input_ids, max_new_tokens=new_tokens, do_sample=False, top_k=0, top_p=1.0,
                   eos_token_id=None, use_cache=use_cache)
    synchronize(device)
    return time.perf_counter() - start


def time_method(model, prompt_ids: list[int], new_tokens: int, use_cache: bool, warmup: int, runs: int,
                device) -> dict:
    """Warm-up and timed runs of one method; ``median_s`` is the number the task asks for."""
    input_ids = torch.tensor([prompt_ids], dtype=torch.long, device=device)
    warmup_s = [time_one_generation(model, input_ids, new_tokens, use_cache, device) for _ in range(warmup)]
    runs_s = [time_one_generation(model, input_ids, new_tokens, use_cache, device) for _ in range(runs)]
    return {"median_s": statistics.median(runs_s), "runs_s": runs_s, "warmup_s": warmup_s}


def time_cache(model, prompt_ids: list[int], new_tokens: int, warmup: int, runs: int, device) -> dict:
    """time.json: with_cache_s, without_cache_s, speedup (without / with), and every run."""
    with_cache = time_method(model, prompt_ids, new_tokens, True, warmup, runs, device)
    without_cache = time_method(model, prompt_ids, new_tokens, False, warmup, runs, device)
    return {
        "with_cache_s": with_cache["median_s"],
        "without_cache_s": without_cache["median_s"],
        "speedup": without_cache["median_s"] / with_cache["median_s"],
        "prompt_len": len(prompt_ids),
        "new_tokens": new_tokens,
        "warmup": warmup,
        "runs": runs,
        "with_cache_runs_s": with_cache["runs_s"],
        "without_cache_runs_s": without_cache["runs_s"],
        "with_cache_warmup_s": with_cache["warmup_s"],
        "without_cache_warmup_s": without_cache["warmup_s"],
        "threads": torch.get_num_threads(),
    }
