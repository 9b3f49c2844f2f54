"""Beyond the task: how many sequences' KV caches fit on one card.

One cached token costs the same in every sequence and at every position,

    kv_bytes_per_token = 2 (K and V) x layers x kv_heads x head_dim x bytes per element,

so a card of M bytes that holds the weights W takes

    sequences = floor((M - W) / (kv_bytes_per_token x context))

sequences of ``context`` tokens (0 when the weights alone do not fit): an upper bound, since the
activations, the CUDA context and the allocator also take memory. The bytes per token are measured in
each dtype with :func:`mminfer.kvcache.measure_kv_bytes` (a real cache of random tokens, on a copy of
the model cast to that dtype), and the prediction is checked on a real cache of a whole batch.
"""

from __future__ import annotations

import copy

from mminfer.kvcache import kv_formula_bytes, measure_kv_bytes
from mminfer.loading import DTYPES, count_parameters

CAPACITY_DTYPES = ("float32", "bfloat16", "float16")
GIB = 2**30
FORMULA = (
    "sequences = floor((memory - weights) / (2 x layers x kv_heads x head_dim x bytes x context))"
)


def weight_bytes(model, dtype: str) -> int:
    """The weights' bytes in ``dtype``: every parameter once (MiniMind's tied embedding once) x its size."""
    return count_parameters(model) * DTYPES[dtype].itemsize


def bytes_per_token(model, config, device, tokens: int) -> dict:
    """{dtype: {"measured", "formula", "matches"}}: one cached token's bytes in each dtype. A dtype whose
    forward pass fails on this device gets "measured": None and the error; nothing is made up for it."""
    model_dtype = next(model.parameters()).dtype
    result = {}
    for name in CAPACITY_DTYPES:
        formula = kv_formula_bytes(
            config.num_hidden_layers,
            1,
            config.num_key_value_heads,
            config.head_dim,
            DTYPES[name].itemsize,
        )
        cast = model if DTYPES[name] == model_dtype else copy.deepcopy(model).to(DTYPES[name])
        try:
            kv = measure_kv_bytes(cast, config, tokens, seed=0, device=device)
        except (RuntimeError, NotImplementedError) as error:
            result[name] = {
                "measured": None,
                "formula": formula,
                "matches": False,
                "error": str(error),
            }
            continue
        result[name] = {
            "measured": kv["bytes_per_token"],
            "formula": formula,
            "matches": kv["measured_bytes"] == formula * tokens,
        }  # in this dtype's own bytes
    return result


def capacity_table(
    per_token: dict, weights: dict, memory_gib: list[float], contexts: list[int]
) -> list[dict]:
    """One row per dtype x memory x context:

    free_bytes             = memory_gib x 2^30 - weights[dtype]
    kv_bytes_per_sequence  = per_token[dtype] x context
    sequences              = floor(free_bytes / kv_bytes_per_sequence), 0 if free_bytes <= 0
    """
    rows = []
    for (
        dtype,
        token_bytes,
    ) in per_token.items():  # None: not measured in that dtype, so no figure either
        for memory in memory_gib:
            free_bytes = int(memory * GIB) - weights[dtype]
            for context in contexts:
                per_sequence = None if token_bytes is None else token_bytes * context
                sequences = (
                    None
                    if per_sequence is None
                    else free_bytes // per_sequence
                    if free_bytes > 0
                    else 0
                )
                rows.append(
                    {
                        "dtype": dtype,
                        "memory_gib": memory,
                        "context": context,
                        "kv_bytes_per_sequence": per_sequence,
                        "free_bytes": free_bytes,
                        "sequences": sequences,
                    }
                )
    return rows


def resolve_contexts(contexts: list, config) -> list[int]:
    """Context lengths as integers ("max" is the model's max_position_embeddings), duplicates dropped."""
    resolved = []
    for context in contexts:
        context = config.max_position_embeddings if context == "max" else int(context)
        if context not in resolved:
            resolved.append(context)
    return resolved


def capacity(
    model,
    config,
    device,
    memory_gib: list[float],
    contexts: list,
    batch: int,
    batch_context: int,
    tokens: int = 16,
) -> dict:
    """capacity.json: bytes per token per dtype, the weights' bytes, the table of sequences per memory
    size and context, and a real batch of ``batch`` x ``batch_context`` tokens against its prediction."""
    contexts = resolve_contexts(contexts, config)
    per_token = bytes_per_token(model, config, device, tokens)
    weights = {dtype: weight_bytes(model, dtype) for dtype in per_token}
    batch_cache = measure_kv_bytes(model, config, batch_context, seed=0, device=device, batch=batch)
    return {
        "bytes_per_token": per_token,
        "weight_bytes": weights,
        "layers": config.num_hidden_layers,
        "kv_heads": config.num_key_value_heads,
        "head_dim": config.head_dim,
        "memory_gib": list(memory_gib),
        "contexts": contexts,
        "rows": capacity_table(
            {dtype: entry["measured"] for dtype, entry in per_token.items()},
            weights,
            memory_gib,
            contexts,
        ),
        "batch_check": {
            "batch": batch,
            "context": batch_context,
            "measured_bytes": batch_cache["measured_bytes"],
            "predicted_bytes": batch_cache["formula_bytes"],
            "matches": batch_cache["matches"],
            "k_shape": batch_cache["k_shape"],
        },
        "formula": FORMULA,
    }
