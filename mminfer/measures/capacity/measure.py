"""Beyond the task: how many sequences' KV caches fit on one card.

One cached token costs the same in every sequence and at every position,

    kv_bytes_per_token = 2 (K and V) x layers x kv_heads x head_dim x bytes per element,

so a card of M bytes that holds the weights W takes

    sequences = floor((M - W) / (kv_bytes_per_token x context))

sequences of ``context`` tokens (0 when the weights alone do not fit): an upper bound, since the
activations, the CUDA context and the allocator also take memory. The bytes per token are measured
in each dtype on a real cache of random tokens (:func:`mminfer.model.cachebytes.fill_cache`, on a
copy of
the model cast to that dtype), and the prediction is checked on a real cache of a whole batch.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from mminfer.measures.capacity.capacity import BatchCheck, Capacity, CapacityRow, DtypeBytes
from mminfer.model.cachebytes import (
    GIB,
    cache_tensor_bytes,
    config_formula_bytes,
    fill_cache,
    sequences_that_fit,
)
from mminfer.model.loading import DTYPES, active_parameters, count_parameters
from mminfer.records import RunInfo


@dataclass(frozen=True)
class CapacitySettings:
    """What the capacity rule measures: config section ``capacity`` (its keys are these fields)."""

    memory_gib: list[float]  # card memory sizes of the table
    contexts: list  # context lengths of the table ("max": the model's longest)
    batch: int  # sequences of the real batch checked against the prediction
    batch_context: int  # tokens of each


CAPACITY_DTYPES = ("float32", "bfloat16", "float16")
FORMULA = (
    "sequences = floor((memory - weights) / (2 x layers x kv_heads x head_dim x bytes x context))"
)


def weight_bytes(model, dtype: str) -> int:
    """The weights' bytes in ``dtype``: every parameter once (a tied embedding once) x its size."""
    return count_parameters(model) * DTYPES[dtype].itemsize


def bytes_per_token(model, config, device, tokens: int) -> dict[str, DtypeBytes]:
    """One cached token's bytes in each dtype.

    A dtype whose forward pass fails on this device gets ``measured=None`` and the error; nothing is
    made up for it.
    """
    model_dtype = next(model.parameters()).dtype
    result = {}
    for name in CAPACITY_DTYPES:
        formula = config_formula_bytes(
            config=config, tokens=1, bytes_per_element=DTYPES[name].itemsize
        )
        if DTYPES[name] == model_dtype:
            cast = model
        else:
            cast = copy.deepcopy(model).to(DTYPES[name])
        try:
            past_key_values, _ = fill_cache(
                model=cast, config=config, tokens=tokens, seed=0, device=device
            )
        except (RuntimeError, NotImplementedError) as error:
            result[name] = DtypeBytes(
                measured=None, formula=formula, matches=False, error=str(error)
            )
            continue
        measured = cache_tensor_bytes(past_key_values)
        result[name] = DtypeBytes(
            measured=measured // tokens,
            formula=formula,
            matches=measured == formula * tokens,  # in this dtype's own bytes
            error=None,
        )
    return result


def capacity_table(
    per_token: dict[str, int | None],
    weights: dict[str, int],
    memory_gib: list[float],
    contexts: list[int],
) -> list[CapacityRow]:
    """One row per dtype x memory x context:

    free_bytes             = memory_gib x 2^30 - weights[dtype]
    kv_bytes_per_sequence  = per_token[dtype] x context
    sequences              = floor(free_bytes / kv_bytes_per_sequence), 0 if free_bytes <= 0
    """
    rows = []
    for dtype, token_bytes in per_token.items():  # None: not measured in that dtype, no figure
        for memory in memory_gib:
            free_bytes = int(memory * GIB) - weights[dtype]
            for context in contexts:
                per_sequence = None if token_bytes is None else token_bytes * context
                row = CapacityRow(
                    dtype=dtype,
                    memory_gib=memory,
                    context=context,
                    kv_bytes_per_sequence=per_sequence,
                    free_bytes=free_bytes,
                    sequences=sequences_that_fit(free_bytes, per_sequence),
                )
                rows.append(row)
    return rows


def checked_batch(*, model, config, context: int, batch: int, device) -> BatchCheck:
    """A real cache of ``batch`` sequences of ``context`` random tokens against the formula."""
    past_key_values, _ = fill_cache(
        model=model, config=config, tokens=context, seed=0, device=device, batch=batch
    )
    first_k = past_key_values[0][0]
    measured = cache_tensor_bytes(past_key_values)
    predicted = config_formula_bytes(
        config=config, tokens=context, bytes_per_element=first_k.element_size(), batch=batch
    )
    return BatchCheck(
        batch=batch,
        context=context,
        measured_bytes=measured,
        predicted_bytes=predicted,
        matches=measured == predicted,
        k_shape=list(first_k.shape),
    )


def resolve_contexts(contexts: list, config) -> list[int]:
    """Context lengths as integers ("max" is the model's max_position_embeddings), no duplicates."""
    resolved = []
    for context in contexts:
        if context == "max":
            context = config.max_position_embeddings
        if int(context) not in resolved:
            resolved.append(int(context))
    return resolved


def capacity(
    *,
    model,
    config,
    device,
    settings: CapacitySettings,
    run: RunInfo,
    tokens: int = 16,
) -> Capacity:
    """capacity.json: what fits on a card, and a real batch against the prediction.

    The bytes per token in each dtype, the weights' bytes, the table of sequences per memory size
    and context, and a real cache of ``settings.batch`` x ``settings.batch_context`` tokens
    against its predicted bytes.
    """
    memory_gib = settings.memory_gib
    contexts = resolve_contexts(settings.contexts, config)
    per_token = bytes_per_token(model, config, device, tokens)
    weights = {dtype: weight_bytes(model, dtype) for dtype in per_token}
    batch_check = checked_batch(
        model=model,
        config=config,
        context=settings.batch_context,
        batch=settings.batch,
        device=device,
    )
    measured_per_token = {dtype: entry.measured for dtype, entry in per_token.items()}
    if config.use_moe:
        experts, experts_per_token = config.num_experts, config.num_experts_per_tok
    else:
        experts, experts_per_token = None, None
    return Capacity(
        bytes_per_token=per_token,
        weight_bytes=weights,
        parameters=count_parameters(model),
        active_parameters=active_parameters(model, config),
        experts=experts,
        experts_per_token=experts_per_token,
        layers=config.num_hidden_layers,
        kv_heads=config.num_key_value_heads,
        head_dim=config.head_dim,
        memory_gib=list(memory_gib),
        contexts=contexts,
        rows=capacity_table(measured_per_token, weights, memory_gib, contexts),
        batch_check=batch_check,
        formula=FORMULA,
        run=run,
    )
