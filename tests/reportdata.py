"""Hand-made records of the result files for the report's tests (and the timing and measurement
tests that render a report): the demo's numbers (README), each helper taking the changes a test
wants. Each is written as the JSON a rule would write and read back with mminfer.records.from_json,
which checks that it has every key of its record."""

from __future__ import annotations

import functools
import json
import random
import statistics
from pathlib import Path

from mminfer.measurements import picture_file, pictures
from mminfer.measures.anatomy.anatomy import Anatomy
from mminfer.measures.batch.batch import Batch
from mminfer.measures.cache.count import Count
from mminfer.measures.cache.same import Same
from mminfer.measures.capacity.capacity import Capacity
from mminfer.measures.conversation.conversation import Conversation
from mminfer.measures.kvbytes.kvbytes import KvBytes
from mminfer.measures.lookup.lookup import Guessing, Lookup
from mminfer.measures.remedies.remedies import Remedies, Remedy
from mminfer.measures.repetition.repetition import Repetition
from mminfer.measures.serve.serve import Serve
from mminfer.measures.sweep.sweep import Sweep, steady_step
from mminfer.measures.temp.sampler import SamplerCheck
from mminfer.measures.temp.temp import Temperatures
from mminfer.measures.time.latency import Latency
from mminfer.measures.time.time import Timing
from mminfer.measures.topk.topk import TopK
from mminfer.measures.topp.topp import TopPDetail
from mminfer.records import RunInfo, from_json, to_json
from mminfer.records.interval import median_interval, ratio_interval
from mminfer.records.machine import speed_of
from mminfer.records.spread import coefficient_of_variation

RUN = {
    "model_set": "demo",
    "checkpoint": "resources/demo/pretrain.pth",
    "sha256": "ab" * 32,
    "inputs": {
        "resources/demo/pretrain.pth": "ab" * 32,
        "resources/demo/tokenizer/tokenizer.json": "12" * 32,
        "resources/demo/tokenizer/tokenizer_config.json": "34" * 32,
        "resources/demo/corpus/pretrain_val.jsonl": "56" * 32,
    },
    "backend": "builtin",
    "device": "cpu",
    "device_name": "cpu",
    "dtype": "float32",
    "threads": 2,
    "torch": "2.13.0",
    "python": "3.11.7",
    "config": {
        "num_hidden_layers": 8,
        "hidden_size": 256,
        "num_attention_heads": 8,
        "num_key_value_heads": 2,
        "head_dim": 32,
        "vocab_size": 2000,
        "max_position_embeddings": 32768,
        "tie_word_embeddings": True,
        "use_moe": False,
        "num_experts": 4,
        "num_experts_per_tok": 1,
        "inference_rope_scaling": False,
        "rope_scaling": None,
    },
    "parameters": 4_000_000,
    "active_parameters": 4_000_000,
    "lora": None,
}

PROMPT = {
    "tokenizer": "resources/demo/tokenizer",
    "val_data": "resources/demo/pretrain_val.jsonl",
    "docs": 6,
    "prompt_tokens": 200,
}


def same_record(**changes) -> Same:
    same = {
        "same_ids": True,
        "ids": [5] * 64,
        "prompt_len": 201,
        "new_tokens": 64,
        "ids_without_cache": [5] * 64,
        "max_abs_logit_diff": 5.7e-06,
        "first_difference": None,
        "text": "가람 마을",
        "ids_past_tokenizer": 0,
        "prompt": PROMPT,
        "run": RUN,
    }
    return from_json(Same, same | changes)


def differing(margin: float, diff: float, dtype: str = "float32") -> Same:
    """same.json whose paths part at step 3 with top-1/top-2 ``margin`` and a logit difference
    ``diff``."""
    return same_record(
        same_ids=False,
        run=RUN | {"dtype": dtype},
        first_difference={
            "step": 3,
            "token_with_cache": 7,
            "token_without_cache": 9,
            "margin_with_cache": margin,
            "margin_without_cache": margin,
            "max_abs_logit_diff": diff,
            "max_abs_logit": 10.0,
        },
    )


def count_record(**changes) -> Count:
    count = {
        "prompt_len": 201,
        "new_tokens": 64,
        "fed_with_cache": 264,
        "fed_without_cache": 14880,
        "formula_with_cache": 264,
        "formula_without_cache": 14880,
        "calls_with_cache": 64,
        "calls_without_cache": 64,
        "prompt": PROMPT,
        "run": RUN,
    }
    return from_json(Count, count | changes)


QUIET = {"cpu_share": 0.98, "cpu_pressure": 0.01, "wall_s": 8.1, "threads": 2, "busy": False}
BUSY = QUIET | {"cpu_share": 0.4, "busy": True}  # another process took the cores


# The demo's narrow model (mminfer.model.narrow): its layers and heads at minimal width.
NARROW_SHAPE = {
    "hidden_size": 16,
    "intermediate_size": 2,
    "vocab_size": 2,
    "num_hidden_layers": 8,
    "num_attention_heads": 8,
    "num_key_value_heads": 2,
}
# Each round's narrow run over its cached run: about 60 %, a quiet machine's spread.
NARROW_SHARES = [0.60, 0.61, 0.59, 0.62, 0.60, 0.58, 0.61]


def narrow_of(with_runs: list[float]) -> list[float]:
    """The narrow side's runs beside these cached runs, one per round (NARROW_SHARES of each)."""
    return [run * NARROW_SHARES[i % len(NARROW_SHARES)] for i, run in enumerate(with_runs)]


def time_json(**changes) -> dict:
    """time.json as a rule writes it: a quiet run that decided after 7 rounds; the intervals and
    the decision from its runs (mminfer.records.interval) unless ``changes`` give them; the narrow
    side's runs NARROW_SHARES of the cached ones unless ``changes`` give them."""
    timing = {
        "with_cache_s": 0.193,
        "without_cache_s": 0.965,
        "speedup": 5.0,
        "prompt_len": 201,
        "new_tokens": 64,
        "warmup": 1,
        "runs": 3,
        "max_runs": 9,
        "order": "interleaved",
        "cv_with_cache": 0.02,
        "cv_without_cache": 0.03,
        "runs_done": 7,
        "extra_rounds": 4,
        "doubts": [],
        "verdict": "ok",
        "noisy_cv": 0.1,
        "with_cache_runs_s": [0.19, 0.191, 0.192, 0.193, 0.195, 0.197, 0.2],
        "without_cache_runs_s": [0.96, 0.962, 0.963, 0.965, 0.966, 0.968, 0.97],
        "with_cache_warmup_s": [0.3],
        "without_cache_warmup_s": [1.2],
        "narrow_warmup_s": [0.2],
        "narrow_shape": NARROW_SHAPE,
        "threads": 2,
        "cpu_count": 2,
        "load_before": [0.5, 0.4, 0.3],
        "load_after": [0.6, 0.4, 0.3],
        "clock": "perf_counter",
        "contention": QUIET,
        "run": RUN,
    }
    if "speedup" in changes and "without_cache_runs_s" not in changes:  # runs that agree
        scale = changes["speedup"] / timing["speedup"]
        timing["without_cache_runs_s"] = [s * scale for s in timing["without_cache_runs_s"]]
        timing["without_cache_s"] *= scale
    timing |= changes
    for side in ("with_cache", "without_cache"):  # runs given: their median is the figure
        if f"{side}_runs_s" in changes and f"{side}_s" not in changes:
            timing[f"{side}_s"] = statistics.median(timing[f"{side}_runs_s"])
    if "speedup" not in changes:
        timing["speedup"] = timing["without_cache_s"] / timing["with_cache_s"]
    if "narrow_runs_s" not in changes:
        timing["narrow_runs_s"] = narrow_of(timing["with_cache_runs_s"])
    return time_intervals(timing) | changes


def time_intervals(timing: dict) -> dict:
    """time.json's intervals and decision from its runs, as mminfer.timing.ab finds them, and the
    narrow side's median and shares, as mminfer.measures.time.measure.timing_record makes them."""
    from mminfer.measures.time.decide import decide_cache_faster
    from mminfer.records import interval

    level = interval.look_level(timing["runs"], timing["max_runs"])
    with_runs, without_runs = timing["with_cache_runs_s"], timing["without_cache_runs_s"]
    narrow_runs = timing["narrow_runs_s"]
    speedup = interval.ratio_interval(without_runs, with_runs, level)
    with_cache = interval.median_interval(with_runs, level)
    without_cache = interval.median_interval(without_runs, level)
    return timing | {
        "with_cache_interval": to_json(with_cache),
        "without_cache_interval": to_json(without_cache),
        "speedup_interval": to_json(speedup),
        "cache_faster": decide_cache_faster(
            without_runs, with_runs, timing["runs"], timing["max_runs"]
        ),
        "narrow_s": statistics.median(narrow_runs),
        "fixed_share_runs": interval.paired_ratios(narrow_runs, with_runs),
        "fixed_share_interval": to_json(interval.ratio_interval(narrow_runs, with_runs, level)),
    }


def time_record(**changes) -> Timing:
    return from_json(Timing, time_json(**changes))


def kv_record(**changes) -> KvBytes:
    kv = {
        "tokens": 100,
        "measured_bytes": 102400,
        "formula_bytes": 102400,
        "k_shape": [1, 100, 2, 32],
        "batch": 1,
        "seed": 0,
        "matches": True,
        "layers": 8,
        "kv_heads": 2,
        "heads": 8,
        "head_dim": 32,
        "dtype": "float32",
        "bytes_per_element": 4,
        "bytes_per_token": 1024,
        "after_repeat_kv_bytes": 409600,
        "allocator_bytes": None,
        "run": RUN,
    }
    return from_json(KvBytes, kv | changes)


def temp_record(distinct=(10, 24, 29)) -> Temperatures:
    sft_run = RUN | {"checkpoint": "resources/demo/sft.pth"}
    prompt = {
        "tokenizer": "resources/demo/tokenizer",
        "template": "tokenizer_config.json",
        "question": "가람 마을의 특산물은 무엇인가요?",
        "prompt_len": 14,
        "seed": 0,
    }
    temp = {}
    for key, n in zip(("0.3", "1.0", "1.5"), distinct):
        temp[key] = {
            "distinct": n,
            "samples": 30,
            "top_share": 0.9,
            "distinct_1": 0.3,
            "distinct_2": 0.5,
            "answers": [{"answer": "유자차입니다.", "count": 27}],
            "ids_past_tokenizer": 0,
            "prompt": prompt,
            "run": sft_run,
        }
    return from_json(Temperatures, temp)


def topp_record() -> dict:
    return {"0.5": 17, "0.9": 74, "0.99": 155}


def position(prefix: str, survivors: dict, entropy_bits: float) -> dict:
    return {
        "prefix": prefix,
        "survivors": survivors,
        "entropy_bits": entropy_bits,
        "top_tokens": [{"id": 5, "token": "가", "prob": 0.3}],
        "sorted_probs": [0.3, 0.2, 0.1],
        "perplexity": 2**entropy_bits,
    }


def topp_detail_record(sharp=(1, 1, 7)) -> TopPDetail:
    detail = {
        "ps": [0.5, 0.9, 0.99],
        "positions": {
            "open": position("민수는", topp_record(), 6.1),
            "sharp": position("가람 마을의 특산물은", dict(zip(topp_record(), sharp)), 0.4),
        },
        "run": RUN,
    }
    return from_json(TopPDetail, detail)


NOISES = ("quiet", "bimodal", "drifting", "outlier", "contention")


def spread_runs(
    values: list, cv: float, runs: int = 5, reverse: bool = False, noise: str = "quiet"
) -> list[list]:
    """``runs`` runs of ``values`` (None kept), run r scaled by a factor from 1 - cv to 1 + cv
    (``reverse``: from 1 + cv down, so that paired ratios spread too), under a kind of noise
    (NOISES): every other run 8 times slower (bimodal), a drift up 15 % a run, the second run
    20 times slower (one outlier), or every run 2.5 times slower and spread 25 % (contention)."""
    factors = [1.0] if runs < 2 else [1 - cv + 2 * cv * i / (runs - 1) for i in range(runs)]
    if reverse:
        factors.reverse()
    for index in range(runs):
        if noise == "bimodal" and index % 2:
            factors[index] *= 8.0
        elif noise == "drifting":
            factors[index] *= 1 + 0.15 * index
        elif noise == "outlier" and index == 1:
            factors[index] *= 20.0
        elif noise == "contention":
            factors[index] *= 2.5 * (1 + 0.25 * (-1) ** (index + reverse))
    return [[None if v is None else v * factor for v in values] for factor in factors]


def sweep_steps(
    with_steps, without_steps, fed_first: int, cv: float, runs: int, noise="quiet", holds=False
):
    """sweep.json's steps: each step's runs ``cv`` either side under ``noise`` (spread_runs), the
    uncached runs in the other order; the uncached steps not clocked (None) filled as the measure
    fills them: from the fit's stand-in where the fit ``holds``, else between steady steps."""
    from mminfer.measures.sweep import measure

    with_runs = spread_runs(with_steps, cv, runs, noise=noise)
    without_runs = spread_runs(without_steps, cv, runs, reverse=True, noise=noise)
    steady = [
        v is not None and steady_step([run[i] for run in without_runs], 0.2)
        for i, v in enumerate(without_steps)
    ]
    fitted = interpolate_all(without_steps)
    filled, how = measure.filled_steps(without_steps, fitted, holds, steady)  # as the fit says
    prompt_len = fed_first
    return {
        "with_cache_s": with_steps,
        "fed_with_cache": [fed_first] + [1] * (len(with_steps) - 1),
        "without_cache_s": without_steps,
        "fed_without_cache": [
            None if v is None else prompt_len + i for i, v in enumerate(without_steps)
        ],
        "fitted_with_cache_s": with_steps,
        "fitted_without_cache_s": fitted,
        "with_cache_low_s": [min(run[i] for run in with_runs) for i in range(len(with_steps))],
        "with_cache_high_s": [max(run[i] for run in with_runs) for i in range(len(with_steps))],
        "without_cache_low_s": [None if v is None else v * (1 - cv) for v in without_steps],
        "without_cache_high_s": [None if v is None else v * (1 + cv) for v in without_steps],
        "filled_without_cache_s": filled,
        "without_cache_how": how,
        "with_cache_runs_s": with_runs,
        "without_cache_runs_s": without_runs,
        "without_cache_steady": steady,
    }


def sweep_runs_figures(steps: dict, lengths: list[int], prompt_len: int) -> dict:
    """The sweep's figures read off its steps' runs, by mminfer.measures.sweep.measure's own
    length_point: the lengths' points and the step intervals."""
    from mminfer.measures.sweep import measure
    from mminfer.measures.sweep.sweep import SweepSteps

    typed = from_json(SweepSteps, steps)
    without = typed.without_cache_runs_s
    last = max(i for i, v in enumerate(typed.without_cache_s) if v is not None)
    return {
        "points": [to_json(measure.length_point(prompt_len, n, typed)) for n in lengths],
        "ttft_interval": to_json(median_interval([run[0] for run in typed.with_cache_runs_s])),
        "uncached_first_interval": to_json(median_interval([run[0] for run in without])),
        "uncached_growth_interval": to_json(
            ratio_interval([run[last] for run in without], [run[0] for run in without])
        ),
    }


def sweep_record(
    holds=True,
    time_ratio=None,
    per_token_s=19e-6,
    extrapolated=True,
    fed_with_cache=32,
    step_growth=0.0001,
    cv=0.02,
    within=0.03,
    runs=5,
) -> Sweep:
    """Lengths 1 and 16 after a 17-token prompt; ``fed_with_cache`` at N = 16 (the formula says
    32); the uncached steps start at the cached prefill's 4 ms and grow by ``step_growth`` a
    step, or evenly so that N = 16 takes ``time_ratio`` times the cached time;
    ``cv`` the spread of both methods' runs, ``within`` of the steps within a run."""
    doubts = []
    if time_ratio is not None and time_ratio <= 1:
        doubts.append("cache_not_faster")
    if cv > 0.1:
        doubts += ["with_cache_spread", "without_cache_spread"]
    if within > 0.2:
        doubts += ["with_cache_spread_within_runs", "without_cache_spread_within_runs"]
    verdict = "ok"
    if doubts:
        verdict = "untrusted" if "cache_not_faster" in doubts else "noisy"
    lengths = (1, 16, 64) if extrapolated else (1, 16)
    predictions = []
    for n in lengths:
        prediction = {
            "new_tokens": n,
            "measured": n <= 16,
            "with_cache_s": 0.05 * n,
            "without_cache_s": 0.3 * n,
            "time_ratio": 6.0,
            "token_ratio": 40.0,
            "fixed_share_with_cache": 0.9,
        }
        predictions.append(prediction)
    with_cache_s = [0.004] + [0.0033] * 15
    if time_ratio is not None:
        step_growth = (time_ratio * sum(with_cache_s) - 16 * 0.004) / sum(range(16))
    without_cache_s = [0.004 + step_growth * step for step in range(16)]
    steps = sweep_steps(with_cache_s, without_cache_s, fed_with_cache - 15, cv, runs)
    sweep = {
        "prompt_len": 17,
        "lengths": [1, 16],
        "longest": 16,
        "warmup": 1,
        "runs": runs,
        "all_steps_up_to": 32,
        "spread_steps": 8,
        "how": "hand-made",
        "threads": 2,
        "load_before": None,
        "load_after": None,
        "clock": "perf_counter",
        "cv_with_cache": cv,
        "cv_without_cache": cv,
        "cv_with_cache_within_runs": within,
        "cv_without_cache_within_runs": within,
        "noisy_cv": 0.1,
        "step_noisy_cv": 0.2,
        "doubts": doubts,
        "verdict": verdict,
        "steps": steps,
        "uncached_ids_match": True,
        "ttft_s": 0.004,
        "decode_s_per_token": 0.0033,
        "contention": QUIET,
        "fit": {
            "model": "step_s = fixed_s[method] + per_token_s x fed + per_pair_s x attended_pairs",
            "method": "least squares",
            "fixed_s_with_cache": 0.0032,
            "fixed_s_without_cache": 0.0031,
            "per_token_s": per_token_s,
            "per_pair_s": 1e-9,
            "held_at_zero": [],
            "r2": 0.99,
            "median_relative_residual": {"with_cache": 0.02, "without_cache": 0.03},
            "holds": holds,
            "measured_new_tokens": [1, 16],
            "measured_context": [17, 32],
            "steps": 32,
        },
        "predictions": predictions,
        "run": RUN,
    }
    return from_json(Sweep, sweep | sweep_runs_figures(steps, [1, 16], 17))


def capacity_record(matches=True) -> Capacity:
    memories, contexts = [24, 80], [2048, 8192]
    rows = []
    for dtype in ("float32", "bfloat16"):
        for context in contexts:
            for memory in memories:
                row = {
                    "dtype": dtype,
                    "memory_gib": memory,
                    "context": context,
                    "kv_bytes_per_sequence": 1024 * context,
                    "free_bytes": memory << 30,
                    "sequences": memory * 1000 // context + (dtype == "bfloat16"),
                }
                rows.append(row)
    capacity = {
        "bytes_per_token": {
            "float32": {"measured": 1024, "formula": 1024, "matches": True, "error": None},
            "bfloat16": {"measured": 512, "formula": 512, "matches": True, "error": None},
        },
        "weight_bytes": {"float32": 4_000_000, "bfloat16": 2_000_000},
        "parameters": 1_000_000,
        "active_parameters": 1_000_000,
        "experts": None,
        "experts_per_token": None,
        "layers": 8,
        "kv_heads": 2,
        "head_dim": 32,
        "memory_gib": memories,
        "contexts": contexts,
        "rows": rows,
        "batch_check": {
            "batch": 2,
            "context": 16,
            "measured_bytes": 32768,
            "predicted_bytes": 32768,
            "matches": matches,
            "k_shape": [2, 16, 2, 32],
        },
        "formula": "sequences = floor(...)",
        "run": RUN,
    }
    return from_json(Capacity, capacity)


def sampler_record(identical=30, differ=28) -> SamplerCheck:
    difference = None
    if identical < 30:
        difference = {"sample": 4, "step": 2, "token_with_cache": 7, "token_without_cache": 9}
    check = {
        "temperature": 1.0,
        "samples": 30,
        "new_tokens": 24,
        "seed": 0,
        "second_seed": 1,
        "identical_with_and_without_cache": identical,
        "first_difference": difference,
        "differ_with_second_seed": differ,
        "prompt": temp_record()["1.0"].prompt,
        "run": RUN,
    }
    check["prompt"] = to_json(check["prompt"])
    return from_json(SamplerCheck, check)


def serve_row(
    batch: int, step_s: float, experts=None, cv: float = 0.01, within: float = 0.02, passes=5
) -> dict:
    """One batch of serve.json: ``passes`` passes whose medians spread by ``cv`` around
    ``step_s``, their steps by ``within`` inside each pass."""
    pass_step_s = [runs[0] for runs in spread_runs([step_s], cv, passes)]
    prefills_s = None
    cv_prefill = None
    if batch <= 8:
        prefills_s = [0.002 * batch] * passes
        cv_prefill = 0.0
    doubts = ["decode_spread"] if cv > 0.1 else []
    if within > 0.2:
        doubts.append("decode_spread_within_passes")
    return {
        "batch": batch,
        "prefill_s": 0.002 * batch if batch <= 8 else None,
        "decode_step_s": step_s,
        "decode_steps_s": [step_s] * 4,
        "prefills_s": prefills_s,
        "pass_step_s": pass_step_s,
        "decode_step_interval": to_json(median_interval(pass_step_s)),
        "prefill_interval": to_json(median_interval(prefills_s)) if prefills_s else None,
        "step_low_s": pass_step_s[0],
        "step_high_s": pass_step_s[-1],
        "cv_decode_step": cv,
        "cv_within_passes": within,
        "cv_prefill": cv_prefill,
        "doubts": doubts,
        "verdict": "noisy" if doubts else "ok",
        "tokens_per_second": batch / step_s,
        "per_user_tokens_per_second": 1 / step_s,
        "kv_bytes": 1024 * 217 * batch,
        "formula_kv_bytes": 1024 * 217 * batch,
        "kv_bytes_match": True,
        "experts_touched": experts,
    }


DEMO_STEPS = {1: 0.010, 2: 0.0102, 4: 0.0105, 8: 0.011, 16: 0.018, 32: 0.026, 64: 0.042}
# The quiet course model: 429 tokens/s at B = 1, 2,274 at B = 32 (5.3 x), 48 ms at 64.
COURSE_STEPS = {1: 0.00233, 2: 0.003, 4: 0.0039, 8: 0.0053, 16: 0.008, 32: 0.01407, 64: 0.048}
CACHES = [
    {"name": "L1d", "bytes": 48 << 10},
    {"name": "L2", "bytes": 2 << 20},
    {"name": "L3", "bytes": 30 << 20},
]


def serve_record(
    binding="speed",
    users_by_speed=48,
    users_by_memory=9000,
    how="fit",
    steps=None,
    cvs=None,
    peak_batch=64,
    growth_stops_at=64,
    nearly_free_up_to=8,
    cliffs=(),
    passes=5,
) -> Serve:
    """serve.json of the demo (``steps``: {batch: decode step}, ``cvs``: {batch: spread}); the
    peak, where growth stops and where batching is nearly free as serve.py finds them there."""
    steps = DEMO_STEPS if steps is None else steps
    cvs = cvs or {}
    rows = [
        serve_row(batch, step, cv=cvs.get(batch, 0.01), passes=passes)
        for batch, step in steps.items()
    ]
    doubts = []
    for row in rows:
        doubts += [doubt for doubt in row["doubts"] if doubt not in doubts]
    batches = list(steps)
    served = {
        "prompt_len": 201,
        "decode_steps": 16,
        "warmup": 1,
        "prefill_up_to": 8,
        "decode_context": 217,
        "context_asked": 2048,
        "batches_planned": batches,
        "memory_cap_gib": 2.0,
        "left_out_by_cap": [],
        "threads": 2,
        "load_before": [0.5, 0.4, 0.3],
        "load_after": [0.6, 0.4, 0.3],
        "clock": "perf_counter",
        "passes": passes,
        "order": "passes interleaved across the batch sizes: up, then down, then up ...",
        "noisy_cv": 0.1,
        "step_noisy_cv": 0.2,
        "doubts": doubts,
        "verdict": "noisy" if doubts else "ok",
        "batches": rows,
        "fit": {
            "model": "step_s = fixed_s + per_sequence_s x batch",
            "method": "least squares in relative error",
            "fixed_s": 0.0095,
            "per_sequence_s": 0.0005,
            "held_at_zero": [],
            "median_relative_residual": 0.05,
            "holds": True,
            "holds_within": 0.25,
            "least_batches": 3,
            "measured_batches": [batches[0], batches[-1]],
            "fitted_batches": [batches[0], batches[-1]],
            "relative_residuals": [0.05] * len(batches),
            "crossover_batch": 19.0,
        },
        "nearly_free": 0.25,
        "nearly_free_up_to": nearly_free_up_to,
        "peak_batch": peak_batch,
        "peak_tokens_per_second": peak_batch / steps[peak_batch],
        "peak_gain": (peak_batch / steps[peak_batch]) / (batches[0] / steps[batches[0]]),
        "growth_per_doubling": 0.1,
        "growth_stops_at": growth_stops_at,
        "growth_stops_within": growth_stops_at < batches[-1],
        "growth_stops_step_s": steps[growth_stops_at],
        "cliffs": list(cliffs),
        "caches": CACHES,
        "caches_source": "/sys/devices/system/cpu/cpu0/cache",
        "users": {
            "tokens_per_second": 25.0,
            "step_target_s": 0.04,
            "context": 2048,
            "users_by_speed": users_by_speed,
            "speed_how": how,
            "speed_between": [32, 64] if how in ("fit", "measured") else None,
            "kv_bytes_per_token": 1024,
            "free_bytes": 9000 * 1024 * 2048,
            "free_source": "/proc/meminfo MemAvailable",
            "users_by_memory": users_by_memory,
            "memory_formula": "floor(free_bytes / (kv_bytes_per_token x context))",
            "binding": binding,
        },
        "contention": QUIET,
        "run": RUN,
    }
    return from_json(Serve, served)


def course_cliff(cause="cache") -> dict:
    """The course model's cliff from B = 32 to 64 (KV 1024 x 217 B a user, weights 19.6 MB): the
    step's memory 26.7 -> 33.8 MB, past a 30 MiB L3 (``cause`` "cache"); "unknown" or "spread"
    name no cache."""
    weights = 4_900_000 * 4
    return {
        "from_batch": 32,
        "to_batch": 64,
        "batch_ratio": 2.0,
        "step_ratio": 0.048 / 0.01407,
        "weight_bytes": weights,
        "kv_bytes_before": 1024 * 217 * 32,
        "kv_bytes_after": 1024 * 217 * 64,
        "attention_kv_bytes_before": 4 * 1024 * 217 * 32,
        "attention_kv_bytes_after": 4 * 1024 * 217 * 64,
        "step_bytes_before": weights + 1024 * 217 * 32,
        "step_bytes_after": weights + 1024 * 217 * 64,
        "crossed": [CACHES[2]] if cause == "cache" else [],
        "likely_cause": cause,
    }


def course_serve_record(**changes) -> Serve:
    """The issue's quiet course model: peak at 32, growth stops there, a cliff to 64, no batch
    size where batching is nearly free (2.33 -> 3.0 ms is +29 %)."""
    settings = {
        "steps": COURSE_STEPS,
        "peak_batch": 32,
        "growth_stops_at": 32,
        "nearly_free_up_to": 1,
        "cliffs": [course_cliff()],
        "how": "measured",
        "users_by_speed": 32,
        "passes": 7,  # serve.passes' default: Holm's levels over its six steps reached
    }
    data = to_json(serve_record(**(settings | changes)))
    # its own line, fitted up to B = 32 (2.38 ms at B = 1, 14.2 ms at 32); B = 64 lies past it
    residuals = [0.021, 0.08, 0.097, 0.049, 0.01, 0.006, 0.45]
    data["fit"] |= {
        "fixed_s": 0.0020,
        "per_sequence_s": 0.00038,
        "median_relative_residual": 0.035,
        "fitted_batches": [1, 32],
        "relative_residuals": residuals,
        "crossover_batch": 0.0020 / 0.00038,
    }
    return from_json(Serve, data)


CHAT_PROMPT = {
    "tokenizer": "resources/demo/tokenizer",
    "template": "tokenizer_config.json",
    "question": "가람 마을의 특산물은 무엇인가요?",
    "prompt_len": 14,
    "seed": 0,
}


def topk_record(distinct=(10, 22, 21), topp=(17, 50, 50), mass=0.802) -> TopK:
    """topk.json: temp's experiment and topp's survivors with top_k=50 left on."""
    temp = {}
    for key, n in zip(("0.3", "1.0", "1.5"), distinct):
        temp[key] = {
            "distinct": n,
            "samples": 30,
            "top_share": 0.6,
            "cut_first": 0.001,
            "cut_mean": 0.02,
            "steps": 400,
            "ids_past_tokenizer": 0,
            "answers": [{"answer": "유자차입니다.", "count": 18}],
        }
    record = {
        "top_k": 50,
        "temp": temp,
        "topp": dict(zip(("0.5", "0.9", "0.99"), topp)),
        "top_k_survivors": 50,
        "top_k_mass": mass,
        "prefix": "민수는",
        "samples": 30,
        "new_tokens": 24,
        "seed": 0,
        "prompt": CHAT_PROMPT,
        "run": RUN | {"checkpoint": "resources/demo/sft.pth"},
        "topp_run": RUN,
    }
    return from_json(TopK, record)


def greedy_looping(loop: int, tokens: int = 64) -> list[int]:
    """Greedy ids that follow plain greedy's loop (1, 2, 3, 4, 1, ...) for their first ``loop``
    ids and then never repeat."""
    return [1 + index % 4 for index in range(loop)] + list(range(100, 100 + tokens - loop))


QUIET_ROUNDS = (0.98, 0.99, 0.995, 1.0, 1.005, 1.01, 1.02)  # 7 rounds: a quiet A/B at 3..9
QUIET_SHUFFLED = (1.0, 0.98, 1.01, 0.99, 1.02, 0.995, 1.005)  # the other side's, in another order
# what a replayed timing records of this machine, fixed: the tests' own machine's left out
MACHINE = {
    "threads": 2,
    "cpu_count": 2,
    "load_before": [0.5, 0.5, 0.5],
    "load_after": [0.6, 0.5, 0.5],
    "clock": "perf_counter",
    "contention": QUIET,
}


def repetition_record(
    distinct=(24, 27, 29),
    looping=(8, 5, 2),
    greedy_loop=(64, 8, 4),
    runs=([0.5 * r for r in QUIET_ROUNDS], [0.44 * r for r in QUIET_SHUFFLED]),
) -> Repetition:
    """repetition.json at T 1.0: penalty 1.0 draws temp.json's 24 answers at 1.0; greedy follows
    plain greedy's loop for ``greedy_loop`` ids per penalty (64: all of them), its repeats and
    divergence found by mminfer.measures.repetition.measure's own code; its cost timed as ``runs``
    (with the penalty, without), judged by that code (a 12 % share over 7 quiet rounds)."""
    from mminfer.measures.repetition.measure import (
        PENALTY_SIDES,
        first_divergence,
        penalty_timing,
        repeated_ngrams,
    )

    penalties = {}
    rows = zip(("1.0", "1.1", "1.3"), distinct, looping, greedy_loop)
    for key, n, loops, loop in rows:
        greedy = greedy_looping(loop)
        penalties[key] = {
            "distinct": n,
            "samples": 30,
            "looping": loops,
            "top_share": 0.1,
            "ids_past_tokenizer": 0,
            "answers": [{"answer": "유자차입니다.", "count": 3}],
            "greedy_ids": greedy,
            "greedy_repeated_ngrams": repeated_ngrams(greedy),
            "greedy_first_divergence": first_divergence(greedy, greedy_looping(64)),
        }
    with_runs, without_runs = runs
    timed = replayed(list(without_runs), list(with_runs), PENALTY_SIDES, runs=3)
    timing = penalty_timing(timed, penalty=1.3, rows=30, steps=24, tokens_seen=38)
    timing = to_json(timing) | {"warmup": 1} | MACHINE
    record = {
        "temperature": 1.0,
        "penalties": penalties,
        "loop_ngram": 3,
        "samples": 30,
        "new_tokens": 24,
        "seed": 0,
        "greedy_new_tokens": 64,
        "timing": timing,
        "prompt": CHAT_PROMPT,
        "greedy_prompt": PROMPT,
        "run": RUN | {"checkpoint": "resources/demo/sft.pth"},
        "greedy_run": RUN,
    }
    return from_json(Repetition, record)


def batch_row(prompt_len, pad, same=True, divergence=None, diff=1e-5, finite=True) -> dict:
    return {
        "prompt_len": prompt_len,
        "pad": pad,
        "same_ids": same,
        "first_divergence": divergence,
        "max_logit_diff": diff if finite else None,
        "max_abs_logit": 20.0,
        "finite": finite,
    }


def batch_record(
    dtype="float32",
    half=None,
    runs=([0.4 * r for r in QUIET_ROUNDS], [1.6 * r for r in QUIET_SHUFFLED]),
) -> Batch:
    """batch.json: eight prompts of 21 to 201 tokens, the same with the mask, changed without;
    timed as ``runs`` (the batch's, one by one's), judged as mminfer.measures.batch.measure judges
    them (4 times faster over 7 quiet rounds)."""
    from mminfer.measures.batch.measure import BATCH_SIDES, batch_timing

    lengths = [201, 21, 47, 72, 98, 124, 150, 175]
    rows = [batch_row(n, 201 - n) for n in lengths]
    no_mask = [batch_row(n, 201 - n, n == 201, None if n == 201 else 0, 5.0) for n in lengths]
    right = [batch_row(n, 201 - n, n == 201, None if n == 201 else 0, 9.0) for n in lengths]
    batch_runs, sequential_runs = runs
    timed = replayed(list(batch_runs), list(sequential_runs), BATCH_SIDES, runs=3)
    timing = to_json(batch_timing(timed, lengths, 64)) | {"warmup": 1} | MACHINE
    record = {
        "rows": rows,
        "no_mask": {"rows": no_mask, "changed": 7},
        "right_padding": {"rows": right, "changed": 7},
        "same_ids": True,
        "pad_id": 0,
        "new_tokens": 64,
        "timing": timing,
        "half_precision": half,
        "prompt": PROMPT,
        "run": RUN | {"dtype": dtype},
    }
    return from_json(Batch, record)


# each remedy's time as a share of MiniMind's cached generate's, over 7 quiet rounds
REMEDY_SHARES = {"loop": 0.99, "in_place_cache": 0.9, "gqa_without_repeat_kv": 0.85, "all": 0.75}
REMEDY_SHARES |= {"compile": 0.55}  # on by default: its first generation took 30 s more


def remedies_record(shares: dict = REMEDY_SHARES, differ: tuple[str, ...] = ()) -> Remedies:
    """remedies.json of the course shape: each remedy timed against MiniMind's 0.4 s as ``shares``
    of it (judged by mminfer.measures.remedies.measure's own code), compile off; ``differ``: the
    remedies whose ids part at step 5 (not timed)."""
    from mminfer.measures.remedies.decide import compile_cost_of
    from mminfer.measures.remedies.measure import REMEDY_SIDES, keep_of, remedy_of, skipped

    minimind = [0.4 * r for r in QUIET_SHUFFLED]
    control = [0.4 * shares["loop"] * r for r in QUIET_SHUFFLED[::-1]] if "loop" in shares else None
    remedies = {}
    for name, share in shares.items():
        runs = [0.4 * share * r for r in QUIET_ROUNDS]
        timed = replayed(runs, minimind, REMEDY_SIDES, runs=3)
        own = (
            None if control is None or name == "loop" else replayed(runs, control, REMEDY_SIDES, 3)
        )
        remedy = remedy_of(name, timed, steps=64, without_cache_s=2.0, control=own)
        remedies[name] = to_json(remedy)
        remedies[name]["contention"] = QUIET
    for name in differ:
        remedies[name] = to_json(skipped(name, None)) | {"applies": True, "same_ids": False}
        remedies[name]["first_divergence"] = 5
    if "compile" not in shares:
        remedies["compile"] = to_json(
            skipped("compile", "off: config key remedies.compile is false")
        )
    kept = replayed(
        [1.6 * r for r in QUIET_ROUNDS], [2.0 * r for r in QUIET_SHUFFLED], REMEDY_SIDES, 3
    )
    keep = to_json(keep_of(kept, same_ids=True, cached_s=0.4)) | {"contention": QUIET}
    record = {
        "prompt_len": 201,
        "new_tokens": 64,
        "token_ratio": 37.8,
        "without_cache_s": 2.0,
        "without_cache_runs_s": [2.0 * r for r in QUIET_ROUNDS],
        "with_cache_s": 0.4,
        "remedies": remedies,
        "compile_asked": "compile" in shares,
        "logits_to_keep": keep,
        "clock": "perf_counter",
        "threads": 2,
        "run": RUN,
        "compile_cost": None,
    }
    if "compile" in shares:
        compiled = from_json(Remedy, remedies["compile"])
        record["compile_cost"] = to_json(
            compile_cost_of(30.0 + 0.4 * shares["compile"], compiled, 64)
        )
    return from_json(Remedies, record)


# lookup.json's calls per K (2, 4, 8) on each case, and each side's seconds, over 7 quiet rounds
LOOKUP_CALLS = {"validation": (25, 18, 12), "chat": (60, 58, 57)}
LOOKUP_SECONDS = {"validation": (0.2, 0.16, 0.13), "chat": (0.42, 0.41, 0.43)}


def lookup_record(
    seconds: dict = LOOKUP_SECONDS, wide: tuple = (1.02, 1.05, 1.2), busy=False
) -> Lookup:
    """lookup.json of the course shape, N = 64: each case's loop at K = 2, 4, 8 taking LOOKUP_CALLS
    calls, timed as ``seconds`` against the cached generate's 0.4 s, the calls of K + 1 tokens
    ``wide`` x a 2 ms step; put in the record by mminfer.measures.lookup.measure's own code."""
    from mminfer.measures.lookup.measure import Case, Checked, case_record
    from mminfer.timing.ab import SidesTiming

    run, rounds, made = from_json(RunInfo, RUN), [{} for _ in QUIET_ROUNDS], {}
    for name, prompt_len in (("validation", 201), ("chat", 57)):
        by_guesses = []
        for k, calls, loop_s, w in zip((2, 4, 8), LOOKUP_CALLS[name], seconds[name], wide):
            guessing = {"guesses": k, "same_ids": True, "calls": calls, "accepted": 64 - calls}
            guessing |= {"proposed": k * (calls - 1), "fed": prompt_len + (k + 1) * (calls - 1)}
            kept = [min(k, max(0, 64 - calls - k * n)) for n in range(calls - 1)]  # first ones all
            held = 2 * 4 * (prompt_len + 63) * 2 * 32 * 4  # 2 x layers x (P + N - 1) x KV x D x 4
            guessing |= {"accepted_per_call": kept, "cache_positions": prompt_len + 63}
            guessing |= {"first_divergence": None, "top2_margin": None, "tolerance": None}
            by_guesses.append(Guessing(**guessing, cache_bytes=held, formula_bytes=held))
            for seconds_s, r, q in zip(rounds, QUIET_ROUNDS, QUIET_SHUFFLED):
                seconds_s |= {f"{name}_{k}": loop_s * r, f"{name}_minimind": 0.4 * q}
                if name == "validation":
                    seconds_s |= {"step": 0.002 * q, f"wide_{k}": 0.002 * w * r}
        work = {f"{name}_{k}": None for k in (2, 4, 8)}
        checked = Checked([], 64, prompt_len + 63, by_guesses, work)
        made[name] = (Case(name, None, [0] * prompt_len, None, run), checked)
    timed = SidesTiming(rounds_s=rounds, runs=3, max_runs=9, contention=None)
    cases = {name: to_json(case_record(*made[name], timed, 64)) for name in made}
    record = {"ngram": 2, "guesses": [2, 4, 8], "clock": "perf_counter", "threads": 2}
    record |= {"cases": cases, "contention": BUSY if busy else QUIET, "run": RUN}
    return from_json(Lookup, record)


def task_records(**replace) -> dict:
    """render_report's records of the six task files, by measurement name, hand-made; ``replace``
    swaps any."""
    records = {
        "same": same_record(),
        "count": count_record(),
        "time": time_record(),
        "kvbytes": kv_record(),
        "temp": temp_record(),
        "topp": topp_record(),
    }
    return records | replace


PICTURES = {name: picture_file(name) for name in pictures()}  # the rule's, from the registry


def every_record(**replace) -> dict:
    """render_report's records as the rule passes them: the task files and the extras, by
    measurement name (render the rule's way with ``pictures=PICTURES, cache_script="cache.py"``)."""
    extras = {
        "topp_detail": topp_detail_record(),
        "sweep": sweep_record(),
        "anatomy": anatomy_record(),
        "latency": latency_record(replace.get("time")),  # the time job's own runs
        "capacity": capacity_record(),
        "sampler": sampler_record(),
        "serve": serve_record(),
        "conversation": conversation_record(),
        "topk": topk_record(),
        "repetition": repetition_record(),
        "batch": batch_record(),
        "remedies": remedies_record(),
        "lookup": lookup_record(),
    }
    return task_records() | extras | replace


def render_every(**replace) -> str:
    """report.md then beyond.md as the rule renders them, from every_record(**replace)."""
    from mminfer.report.render import render_reports

    return "".join(render_reports(every_record(**replace), PICTURES, "cache.py").values())


CONVERSATION = Path(__file__).resolve().parent / "data" / "conversation.json"


# each timed turn's first token, recomputed and carried, in 7 quiet rounds (turns 2, 3, 4)
QUIET_TURNS = {
    turn: ([recompute * r for r in QUIET_ROUNDS], [carry * r for r in QUIET_SHUFFLED])
    for turn, recompute, carry in ((2, 0.0018, 0.0012), (3, 0.0024, 0.00125), (4, 0.0031, 0.0013))
}


def conversation_record() -> Conversation:
    """A four-turn conversation of the tiny test model (tests/data/conversation.json, measured by
    mminfer.measures.conversation.measure and frozen), its timed turns (2, 3, 4) timed in 7 quiet
    rounds each (QUIET_TURNS)."""
    return conversation_timed(QUIET_TURNS)


# --- timings from their runs, judged by the project's own rules (mminfer.timing.ab) ---------------


def replayed(a_runs: list[float], b_runs: list[float], sides, runs: int | None = None):
    """The A/B timing record (mminfer.timing.ab.ab_record, what time_ab returns) of runs that took
    these seconds: medians, spreads, doubts and verdict as the measurements' own code finds them;
    ``runs`` asked for (the rest extra rounds), all of them where None."""
    from mminfer.timing.ab import ab_record  # torch: the records alone are read without it

    return ab_record(
        a_runs_s=a_runs,
        b_runs_s=b_runs,
        a_warmup_s=[],
        b_warmup_s=[],
        sides=sides,
        runs=len(a_runs) if runs is None else min(runs, len(a_runs)),
        max_runs=max(len(a_runs), 9),
        meter=None,
    )


def repetition_timed(with_runs: list[float], without_runs: list[float], **changes) -> Repetition:
    """repetition.json whose cost was timed as these runs (the penalty-free run as side a, as
    mminfer.measures.repetition.measure.time_penalty times it), 3 rounds asked for, 9 at most."""
    return repetition_record(runs=(with_runs, without_runs), **changes)


def batch_timed(batch_runs: list[float], sequential_runs: list[float], **changes) -> Batch:
    """batch.json whose timing ran as these runs (the batch as side a, as
    mminfer.measures.batch.measure times it), 3 rounds asked for, 9 at most."""
    return batch_record(runs=(batch_runs, sequential_runs), **changes)


def conversation_timed(runs: dict[int, tuple[list[float], list[float]]]) -> Conversation:
    """The four-turn conversation (tests/data/conversation.json) whose timed turns ran as
    ``runs``: turn -> (recompute's runs, carry's), each judged as
    mminfer.measures.conversation.measure.time_turn judges them, 3 rounds asked for, 9 at most."""
    from mminfer.measures.conversation.measure import CARRY_SIDES, turn_timing, worst_verdict

    data = json.loads(CONVERSATION.read_text(encoding="utf-8"))
    verdicts = []
    for turn in data["turns"]:
        if turn["timing"] is None:
            continue
        recompute_runs, carry_runs = runs[turn["turn"]]
        timed = replayed(list(carry_runs), list(recompute_runs), CARRY_SIDES, runs=3)
        turn["timing"] = to_json(turn_timing(timed)) | {"contention": QUIET}
        verdicts.append(timed.verdict)
    data["timing_verdict"] = worst_verdict(verdicts)
    data["noisy_cv"] = timed.noisy_cv
    data["runs"] = timed.runs
    data["max_runs"] = timed.max_runs
    data["contention"] = QUIET
    return from_json(Conversation, data)


def clocked_sweep(
    prompt_len: int,
    lengths: list[int],
    with_steps: list[float],
    without_steps: list[float | None],
    holds: bool = False,
    fixed_s_with_cache: float = 0.0032,
    runs_cv: float = 0.02,
    runs: int = 5,
    noise: str = "quiet",
) -> Sweep:
    """sweep.json from every cached step and the uncached steps clocked (None: not clocked), each
    step's runs ``runs_cv`` either side under ``noise`` (sweep_steps), the rest filled and each
    length summed by mminfer.measures.sweep.measure's own functions, the spreads, doubts and
    verdict by its own rules."""
    from mminfer.measures.sweep import measure
    from mminfer.records.spread import verdict_of

    longest = len(with_steps)
    base = to_json(sweep_record(holds=holds))
    steps = sweep_steps(with_steps, without_steps, prompt_len, runs_cv, runs, noise, holds)
    figures = sweep_runs_figures(steps, lengths, prompt_len)
    points = figures["points"]
    leading = [step for step, seconds in enumerate(without_steps) if seconds is None]
    short = min(16, longest, *leading)  # the first steps, every one clocked
    measured = {
        "with_cache_runs_s": [measure.run_total(run) for run in steps["with_cache_runs_s"]],
        "without_cache_runs_s": [measure.run_total(run) for run in steps["without_cache_runs_s"]],
        "with_cache_cv_within_runs": measure.spread_within_runs(
            steps["with_cache_runs_s"], True, short
        ),
        "without_cache_cv_within_runs": measure.spread_within_runs(
            steps["without_cache_runs_s"], False, short
        ),
    }
    doubts = measure.spread_doubts(measured, runs, points[-1]["time_ratio"])
    predictions = []
    for point in points:
        share = point["new_tokens"] * fixed_s_with_cache / point["with_cache_s"]
        predictions.append(
            {
                "new_tokens": point["new_tokens"],
                "measured": True,
                "with_cache_s": point["with_cache_s"],
                "without_cache_s": point["without_cache_s"] or 0.0,
                "time_ratio": point["time_ratio"],
                "token_ratio": point["token_ratio"],
                "fixed_share_with_cache": min(share, 1.0),
            }
        )
    base["fit"] |= {
        "fixed_s_with_cache": fixed_s_with_cache,
        "measured_new_tokens": [lengths[0], lengths[-1]],
        "measured_context": [prompt_len, prompt_len + longest],
        "steps": longest + sum(seconds is not None for seconds in without_steps),
    }
    spread_steps = sum(seconds is not None for seconds in without_steps[16:])
    sweep = base | {
        "prompt_len": prompt_len,
        "lengths": lengths,
        "longest": longest,
        "runs": runs,
        "all_steps_up_to": min(16, longest),
        "spread_steps": spread_steps,
        "cv_with_cache": coefficient_of_variation(measured["with_cache_runs_s"]),
        "cv_without_cache": coefficient_of_variation(measured["without_cache_runs_s"]),
        "cv_with_cache_within_runs": measured["with_cache_cv_within_runs"],
        "cv_without_cache_within_runs": measured["without_cache_cv_within_runs"],
        "doubts": doubts,
        "verdict": verdict_of(doubts, measure.CONTRADICTIONS),
        "steps": steps,
        "ttft_s": with_steps[0],
        "decode_s_per_token": sum(with_steps[1:]) / (longest - 1) if longest > 1 else None,
        "predictions": predictions,
    }
    return from_json(Sweep, sweep | figures)


def interpolate_all(seconds: list[float | None]) -> list[float]:
    """A stand-in for the fit: the clocked steps joined by straight lines, held flat past the
    ends."""
    known = [(step, value) for step, value in enumerate(seconds) if value is not None]
    filled = []
    for step in range(len(seconds)):
        left = max((pair for pair in known if pair[0] <= step), default=known[0])
        right = min((pair for pair in known if pair[0] >= step), default=known[-1])
        if right[0] == left[0]:
            filled.append(left[1])
        else:
            share = (step - left[0]) / (right[0] - left[0])
            filled.append(left[1] + share * (right[1] - left[1]))
    return filled


def timed(
    with_runs: list[float],
    without_runs: list[float],
    runs: int = 3,
    narrow_runs: list[float] | None = None,
    **changes,
) -> Timing:
    """time.json from its runs, summarised by mminfer.measures.time.measure's own timing_record (the
    medians, the speedup, the spreads, the doubts, the verdict, the narrow side's shares: its runs
    ``narrow_runs``, else NARROW_SHARES of the cached ones); the machine's conditions (threads,
    cores, load) as time_json's, so that a golden report does not depend on the machine."""
    from mminfer.measures.time.measure import CACHE_SIDES, timing_record
    from mminfer.timing.ab import ab_record

    timed_runs = ab_record(
        a_runs_s=with_runs,
        b_runs_s=without_runs,
        a_warmup_s=[with_runs[0] * 1.5],
        b_warmup_s=[without_runs[0] * 1.2],
        sides=CACHE_SIDES,
        runs=runs,
        max_runs=9,
        meter=None,
    )
    record = timing_record(
        timed=timed_runs,
        narrow_runs_s=narrow_of(with_runs) if narrow_runs is None else narrow_runs,
        narrow_warmup_s=[with_runs[0] * 0.9],
        narrow_shape=NARROW_SHAPE,
        prompt_len=201,
        new_tokens=64,
        run=from_json(RunInfo, RUN),
    )
    data = to_json(record) | {
        "threads": 2,
        "cpu_count": 2,
        "load_before": [0.5, 0.4, 0.3],
        "load_after": [0.6, 0.4, 0.3],
        "contention": QUIET,
    }
    return from_json(Timing, data | changes)


def served(
    steps: dict[int, float],
    cvs: dict[int, float] | None = None,
    prefill_cvs: dict[int, float] | None = None,
    free_bytes: int | None = 9000 * 1024 * 2048,
    tokens_per_second: float = 25.0,
    passes: int = 5,
    within: dict[int, float] | None = None,
    noises: dict[int, str] | None = None,
) -> Serve:
    """serve.json from each batch's passes, summarised by mminfer.measures.serve.measure's own
    functions: every
    row (batch_step: the medians, spreads, doubts, verdict), the fit, the peak, where growth
    stops, where batching is nearly free, the cliffs and the users bound. ``cvs``: the spread of
    a batch's passes' median steps, ``prefill_cvs`` of its prefills, ``within`` the jitter of
    the steps inside each pass (every other step that much slower), ``noises`` the kind of noise
    of its passes (spread_runs)."""
    from mminfer.measures.serve import measure
    from mminfer.measures.serve.serve import CacheLevel
    from mminfer.records.spread import verdict_of

    cvs, prefill_cvs, within = cvs or {}, prefill_cvs or {}, within or {}
    rows = []
    for batch, step_s in steps.items():
        c = cvs.get(batch, 0.01)
        noise = (noises or {}).get(batch, "quiet")
        spread = [runs[0] for runs in spread_runs([1.0], c, passes, batch % 2 == 1, noise)]
        jitter = within.get(batch, 0.0)
        passes_s = [
            [step_s * factor * (1 + jitter * (i % 2)) for i in range(8)] for factor in spread
        ]
        prefills_s = None
        if batch <= 8:
            base = spread_runs([0.002 * batch], prefill_cvs.get(batch, 0.0), passes)
            prefills_s = [runs[0] for runs in base]
        kv = 1024 * 217 * batch
        rows.append(
            measure.batch_step(
                batch, passes_s, prefills_s, kv, kv, None, rows[-1] if rows else None
            )
        )
    fit = measure.fit_batches(rows)
    top = measure.peak(rows)
    stops = measure.growth_stops_at(rows, 0.1)
    users = measure.users_bound(
        rows, fit, tokens_per_second, 2048, 1024, free_bytes, "/proc/meminfo MemAvailable"
    )
    caches = [CacheLevel(**level) for level in CACHES]
    doubts = measure.table_doubts(rows)
    data = to_json(serve_record()) | {
        "passes": passes,
        "doubts": doubts,
        "verdict": verdict_of(doubts, measure.CONTRADICTIONS),
        "batches": to_json(rows),
        "batches_planned": list(steps),
        "fit": to_json(fit),
        "nearly_free_up_to": measure.nearly_free_up_to(rows),
        "peak_batch": top.batch,
        "peak_tokens_per_second": top.tokens_per_second,
        "peak_gain": top.tokens_per_second / rows[0].tokens_per_second,
        "growth_stops_at": stops.batch,
        "growth_stops_within": stops.batch < rows[-1].batch,
        "growth_stops_step_s": stops.decode_step_s,
        "cliffs": to_json(measure.cliffs(rows, caches, 4, 4_900_000 * 4)),
        "users": to_json(users),
    }
    return from_json(Serve, data)


def latency_record(
    time: Timing | None = None,
    ttft_s: tuple[float, float] = (0.006, 0.006),
    growth: float = 0.3,
    wobble: float = 0.05,
    sliver_s: float = 2e-5,
    speed_tokens: tuple[int, ...] = (8, 16, 64),
    streamer_s: float = 5e-5,
    cost_rounds: int = 2,
) -> Latency:
    """latency.json from stamps made for ``time``'s runs (time_record() by default), summarised by
    mminfer.measures.time.measure's own latency_record: each run's first token at ``ttft_s`` (with,
    without the
    cache; at most half the run), its last ``sliver_s`` before the run's end, the gaps between
    growing by ``growth`` of the first from the first step to the last on the uncached path (flat
    on the cached), each gap shaken by up to ``wobble`` of itself, run by run; the streamer's cost:
    the first ``cost_rounds`` cached runs again, ``streamer_s`` shorter without it."""
    import itertools
    import math

    from mminfer.measures.time.measure import latency_record as summarise
    from mminfer.measures.time.measure import streamer_calls_s, streamer_cost

    time = time or time_record()
    n = time.new_tokens

    def stamps(seconds: float, ttft: float, grows: float, run: int) -> tuple[list[float], float]:
        ttft = min(ttft, seconds / 2)  # a first token inside the run
        shape = [
            (1 + grows * k / max(n - 2, 1)) * (1 + wobble * math.sin(1.7 * k + 2.3 * run))
            for k in range(n - 1)
        ]
        scale = (seconds - sliver_s - ttft) / sum(shape)
        put = [ttft * 0.02, ttft, *(ttft + scale * sum(shape[: k + 1]) for k in range(n - 1))]
        return put, seconds - sliver_s / 2

    ticks = itertools.count()
    cost = streamer_cost(
        streamed_s=time.with_cache_runs_s,
        unstreamed_s=[s - streamer_s for s in time.with_cache_runs_s[:cost_rounds]],
        calls_s=streamer_calls_s(puts=1 + n, device="cpu", clock=lambda: next(ticks) * 1e-6),
        puts=1 + n,
    )
    record = summarise(
        timing=time,
        with_cache=[stamps(s, ttft_s[0], 0.0, run) for run, s in enumerate(time.with_cache_runs_s)],
        without_cache=[
            stamps(s, ttft_s[1], growth, run) for run, s in enumerate(time.without_cache_runs_s)
        ],
        speed_tokens=list(speed_tokens),
        cost=cost,
    )
    return from_json(Latency, to_json(record))


# --- anatomy.json ------------------------------------------------------------------------------

# The ops a call of forward runs on RUN's model (8 layers): SDPA when fed more than one token and
# no past, the explicit path otherwise; the kernels generate runs between two calls.
PREFILL_OPS = 640
DECODE_OPS = 760
BETWEEN_OPS = 5


@functools.cache
def anatomy_path(use_cache: bool, prompt_len: int = 201, new_tokens: int = 64) -> dict:
    """A path's counts for RUN's model, each call and the totals through
    mminfer.measures.anatomy.measure's own
    step_of and totals_of (made once per shape: read it, never change it)."""
    from mminfer.measures.anatomy.measure import SDPA_CPU, Shape, formula_parts, step_of, totals_of

    config = RUN["config"]
    shape = Shape(
        layers=config["num_hidden_layers"],
        hidden=config["hidden_size"],
        heads=config["num_attention_heads"],
        kv_heads=config["num_key_value_heads"],
        head_dim=config["head_dim"],
        intermediate=768,
        vocab=config["vocab_size"],
        experts=0,
        experts_per_token=0,
        moe_intermediate=0,
        lora=(),
    )
    steps = []
    for call in range(new_tokens):
        context = prompt_len + call
        fed = 1 if use_cache and call else context
        parts = formula_parts(shape, fed, context, fed)
        sdpa = fed > 1  # the counter misses CPU SDPA: the attention term
        steps.append(
            step_of(
                shape,
                fed=fed,
                context=context,
                rows=fed,
                flops_counted=sum(parts.values()) - (parts["attention"] if sdpa else 0),
                uncounted_ops={SDPA_CPU: shape.layers} if sdpa else {},
                ops=PREFILL_OPS if sdpa else DECODE_OPS,
                bytes_per_element=4,
            )
        )
    totals = totals_of(steps, BETWEEN_OPS * new_tokens)
    return {
        "steps": [to_json(step) for step in steps],
        "totals": to_json(totals),
        "working_set_bytes": totals.bytes_formula // len(steps),
        "new_ids": [7] * new_tokens,
    }


# A probe's (or a path's) seven runs, as factors of their middle, by the noise that shook them.
NOISE = {
    "quiet": (0.97, 0.98, 0.99, 1.0, 1.01, 1.02, 1.03),
    "bimodal": (1.0, 1.0, 1.01, 0.99, 1.0, 1.02, 0.0072),  # issue 47's: six at 64 ms, one 0.46
    "drifting": tuple(1 + 0.15 * i for i in range(7)),
    "outlier": (1.0, 0.99, 1.01, 20.0, 1.0, 1.02, 0.98),
    "contention": (2.1, 2.9, 2.4, 3.1, 2.2, 2.6, 2.8),
}


def speed(per_s: float, work: int, cv: float = 0.02, noise: str | None = None, seed=0) -> dict:
    """A probe's record: seven runs around work / per_s, spread by about ``cv``, or shaken by a
    ``noise`` of NOISE (its factors shuffled by ``seed``)."""
    factors = [1 + cv * offset for offset in (-1.5, -1, -0.5, 0, 0.5, 1, 1.5)]
    if noise is not None:
        factors = random.Random(seed).sample(NOISE[noise], len(NOISE[noise]))
    runs = [work / per_s * factor for factor in factors]
    return to_json(speed_of(runs, work, coefficient_of_variation(runs)))


def anatomy_record(
    op_s: float = 4e-6,
    flops_per_s: float = 3e11,
    bytes_per_s: float = 3e10,
    noisy_probe: bool = False,
    new_tokens: int = 64,
    noises: dict[str, str] | None = None,
    seed: int = 0,
    **changes,
) -> Anatomy:
    """anatomy.json of RUN's model at time_record's P (and N, unless ``new_tokens``): the op's
    cost, the matmul FLOP/s and the bandwidth decide which term binds against time_record's
    medians; ``noises`` shakes probes (by name, as Anatomy.probes) with NOISE's kinds."""
    noises = noises or {}
    with_cache = anatomy_path(True, new_tokens=new_tokens)
    without_cache = anatomy_path(False, new_tokens=new_tokens)
    bandwidth = [
        {
            "at": at,
            "working_set_bytes": size,
            "speed": speed(bytes_per_s, 64 << 20, noise=noises.get(f"bandwidth_{at}"), seed=seed),
        }
        for at, size in (
            ("with_cache", with_cache["working_set_bytes"]),
            ("without_cache", without_cache["working_set_bytes"]),
            ("past_last_level", 128 << 20),
        )
    ]
    data = {
        "prompt_len": 201,
        "new_tokens": new_tokens,
        "with_cache": with_cache,
        "without_cache": without_cache,
        "same_ids": True,
        "uncounted_ops": {"aten._scaled_dot_product_flash_attention_for_cpu": "attention"},
        "flop_counter": "FlopCounterMode's flop_registry, op by op",
        "bytes_per_element": 4,
        "machine": {
            "op": speed(1 / op_s, 2000, 0.2 if noisy_probe else 0.02, noises.get("op"), seed),
            "op_probe": "torch.add(a, b, out=c) on one-element tensors, under inference_mode",
            "matmul": speed(flops_per_s, 2 * 1024**3, noise=noises.get("matmul"), seed=seed),
            "matmul_size": 1024,
            "bandwidth": bandwidth,
            "last_level_bytes": 32 << 20,
            "noisy_cv": 0.1,
        },
        "split_tolerance": 0.5,
        "threads": 2,
        "cpu_count": 2,
        "load_before": [0.5, 0.4, 0.3],
        "load_after": [0.6, 0.4, 0.3],
        "run": RUN,
        "contention": QUIET,
        "profile": {
            "with_cache": profile_data(0.45, 0.30),
            "without_cache": profile_data(1.9, 0.1, cat=0.0),
        },
    }
    return from_json(Anatomy, data | changes)


# A profiled path's shares of the ops' time (anatomy's CATEGORIES), the rest given apart.
PROFILE_SHARES = {
    "matmul": 0.40,
    "attention": 0.10,
    "kv_cat": 0.08,
    "repeat_kv": 0.17,
    "elementwise": 0.15,
    "lm_head": 0.07,
    "sampling": 0.03,
}


def profile_data(wall_s: float, rest: float, cat: float = 0.08) -> dict:
    """A Profile's JSON: three rounds around ``wall_s``, ``rest`` its share of the wall, ``cat``
    the cache's cat's share of the ops (none without the cache)."""
    rounds = []
    for shake in (0.97, 1.0, 1.04):
        wall = wall_s * shake
        ops = wall * (1 - rest * shake)
        shares = PROFILE_SHARES | {"kv_cat": cat}
        parts = {name: ops * share / sum(shares.values()) for name, share in shares.items()}
        rounds.append(parts | {"rest": wall - ops, "wall": wall})
    keys = [*PROFILE_SHARES, "rest"]
    intervals = {key: median_interval([r[key] for r in rounds]) for key in keys}
    walls = [r["wall"] for r in rounds]
    return {
        "rounds": rounds,
        "unprofiled_s": [w / 1.3 for w in walls],
        "parts_s": {key: intervals[key].median for key in keys},
        "parts_interval": to_json(intervals),
        "wall_s": median_interval(walls).median,
        "wall_interval": to_json(median_interval(walls)),
        "profiler_cost": to_json(ratio_interval(walls, [w / 1.3 for w in walls])),
    }
