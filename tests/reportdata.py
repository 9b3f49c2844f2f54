"""Hand-made result files for the report's tests (and the timing and measurement tests that render a
report): the demo's numbers (README), each helper taking the changes a test wants."""

from __future__ import annotations

RUN = {
    "model_set": "demo",
    "checkpoint": "resources/demo/pretrain.pth",
    "sha256": "ab" * 32,
    "backend": "builtin",
    "device": "cpu",
    "device_name": "cpu",
    "dtype": "float32",
    "torch": "2.13.0",
    "python": "3.11.7",
    "threads": 2,
    "tokenizer": "resources/demo/tokenizer",
    "val_data": "resources/demo/pretrain_val.jsonl",
    "docs": 6,
    "prompt_tokens": 200,
    "config": {
        "num_hidden_layers": 8,
        "hidden_size": 256,
        "num_attention_heads": 8,
        "num_key_value_heads": 2,
        "head_dim": 32,
        "vocab_size": 2000,
        "tie_word_embeddings": True,
    },
}


def same_json(**changes) -> dict:
    return {
        "same_ids": True,
        "ids": [5] * 64,
        "prompt_len": 201,
        "new_tokens": 64,
        "max_abs_logit_diff": 5.7e-06,
        "first_difference": None,
        "run": RUN,
    } | changes


def differing(margin: float, diff: float, dtype: str = "float32") -> dict:
    """same.json whose paths part at step 3 with top-1/top-2 ``margin`` and a logit difference ``diff``."""
    return same_json(
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


def count_json() -> dict:
    return {
        "prompt_len": 201,
        "new_tokens": 64,
        "fed_with_cache": 264,
        "fed_without_cache": 14880,
        "formula_with_cache": 264,
        "formula_without_cache": 14880,
        "run": RUN,
    }


def time_json(**changes) -> dict:
    return {
        "with_cache_s": 0.193,
        "without_cache_s": 0.965,
        "speedup": 5.0,
        "warmup": 1,
        "runs": 3,
        "runs_done": 3,
        "extra_rounds": 0,
        "cv_with_cache": 0.02,
        "cv_without_cache": 0.03,
        "noisy_cv": 0.1,
        "verdict": "ok",
        "doubts": [],
        "threads": 2,
        "cpu_count": 2,
        "load_before": [0.5, 0.4, 0.3],
        "load_after": [0.6, 0.4, 0.3],
    } | changes


def kv_json(**changes) -> dict:
    return {
        "tokens": 100,
        "measured_bytes": 102400,
        "formula_bytes": 102400,
        "k_shape": [1, 100, 2, 32],
        "dtype": "float32",
        "layers": 8,
        "kv_heads": 2,
        "heads": 8,
        "head_dim": 32,
        "bytes_per_element": 4,
        "bytes_per_token": 1024,
        "after_repeat_kv_bytes": 409600,
        "allocator_bytes": None,
        "seed": 0,
    } | changes


def temp_json(distinct=(10, 24, 29)) -> dict:
    sft_run = RUN | {
        "checkpoint": "resources/demo/sft.pth",
        "question": "가람 마을의 특산물은 무엇인가요?",
        "seed": 0,
    }
    return {
        t: {
            "distinct": n,
            "samples": 30,
            "top_share": 0.9,
            "distinct_2": 0.5,
            "run": sft_run,
            "answers": [{"answer": "유자차입니다.", "count": 27}],
        }
        for t, n in zip(("0.3", "1.0", "1.5"), distinct)
    }


def topp_json() -> dict:
    return {"0.5": 17, "0.9": 74, "0.99": 155}


def topp_detail_json(sharp=(1, 1, 7)) -> dict:
    return {
        "ps": [0.5, 0.9, 0.99],
        "positions": {
            "open": {"prefix": "민수는", "survivors": topp_json(), "entropy_bits": 6.1},
            "sharp": {
                "prefix": "가람 마을의 특산물은",
                "survivors": dict(zip(topp_json(), sharp)),
                "entropy_bits": 0.4,
            },
        },
    }


def sweep_point(
    new_tokens: int,
    fed_with_cache: int,
    formula_with_cache: int,
    fed_without_cache: int,
    time_ratio: float,
) -> dict:
    return {
        "new_tokens": new_tokens,
        "fed_with_cache": fed_with_cache,
        "formula_with_cache": formula_with_cache,
        "fed_without_cache": fed_without_cache,
        "formula_without_cache": fed_without_cache,
        "with_cache_s": 0.05 * new_tokens,
        "without_cache_s": 0.2 * new_tokens,
        "token_ratio": fed_without_cache / formula_with_cache,
        "time_ratio": time_ratio,
    }


def sweep_json(
    holds=True,
    time_ratio=5.7,
    per_token_s=19e-6,
    extrapolated=True,
    fed_with_cache=32,
    step_growth=0.0001,
) -> dict:
    """Lengths 1 and 16 after a 17-token prompt; ``fed_with_cache`` at N = 16 (the formula says 32)."""
    lengths = (1, 16, 64) if extrapolated else (1, 16)
    return {
        "prompt_len": 17,
        "longest": 16,
        "warmup": 1,
        "runs": 1,
        "threads": 2,
        "load_before": None,
        "load_after": None,
        "points": [
            sweep_point(1, 17, 17, 17, 1.0),
            sweep_point(16, fed_with_cache, 32, 392, time_ratio),
        ],
        "ttft_s": 0.004,
        "decode_s_per_token": 0.0033,
        "steps": {
            "with_cache_s": [0.004] + [0.0033] * 15,
            "without_cache_s": [0.004 + step_growth * step for step in range(16)],
        },
        "predictions": [
            {
                "new_tokens": n,
                "measured": n <= 16,
                "time_ratio": 6.0,
                "token_ratio": 40.0,
                "fixed_share_with_cache": 0.9,
            }
            for n in lengths
        ],
        "fit": {
            "model": "step_s = fixed_s[method] + per_token_s x fed + per_pair_s x attended_pairs",
            "fixed_s_with_cache": 0.0032,
            "fixed_s_without_cache": 0.0031,
            "per_token_s": per_token_s,
            "per_pair_s": 1e-9,
            "r2": 0.99,
            "holds": holds,
            "held_at_zero": [],
            "steps": 32,
            "measured_context": [17, 32],
            "median_relative_residual": {"with_cache": 0.02, "without_cache": 0.03},
        },
    }


def capacity_json(matches=True) -> dict:
    memories, contexts = [24, 80], [2048, 8192]
    return {
        "layers": 8,
        "kv_heads": 2,
        "head_dim": 32,
        "memory_gib": memories,
        "contexts": contexts,
        "bytes_per_token": {
            "float32": {"measured": 1024, "formula": 1024},
            "bfloat16": {"measured": 512, "formula": 512},
        },
        "weight_bytes": {"float32": 4_000_000, "bfloat16": 2_000_000},
        "rows": [
            {
                "dtype": d,
                "context": c,
                "memory_gib": m,
                "sequences": m * 1000 // c + (d == "bfloat16"),
            }
            for d in ("float32", "bfloat16")
            for c in contexts
            for m in memories
        ],
        "batch_check": {
            "batch": 2,
            "context": 16,
            "measured_bytes": 32768,
            "predicted_bytes": 32768,
            "matches": matches,
        },
    }


def task_json(**replace) -> dict:
    """render_report's arguments for the six task files, hand-made; ``replace`` swaps any of them."""
    return {
        "same": same_json(),
        "count": count_json(),
        "timing": time_json(),
        "kv": kv_json(),
        "temp": temp_json(),
        "topp": topp_json(),
    } | replace


def every_json(**replace) -> dict:
    """render_report's arguments as the rule passes them: the task files, the extras, pictures, cache.py."""
    return (
        task_json()
        | {
            "topp_detail": topp_detail_json(),
            "sweep": sweep_json(),
            "capacity": capacity_json(),
            "pictures": {"sweep": "sweep.png", "temp": "temp.png", "topp": "topp.png"},
            "cache_script": "cache.py",
        }
        | replace
    )
