"""Beyond the task: how many sequences' KV caches fit on one card.

The cache of one token is the same in every sequence and at every position:

    kv_bytes_per_token = 2 (K and V) x layers x kv_heads x head_dim x bytes per element

so a card with M bytes holding the model's weights W takes

    sequences = floor((M - W) / (kv_bytes_per_token x context))

sequences of ``context`` tokens (0 when the weights alone do not fit). It is an upper bound: the
activations of a forward pass, the CUDA context, the allocator's rounding and fragmentation also take
memory, and the model's non-persistent buffers (the rotary cos/sin tables) are not counted as weights.

Bytes per token are measured, not only computed: the model is copied to each dtype, a cache is filled
with random tokens (:func:`mminfer.kvcache.fill_cache`) and its tensors' bytes are divided by the token
count. :func:`check_batch_prediction` then builds the cache of a whole batch for real and checks the
prediction batch x context x bytes_per_token against it.
"""

from __future__ import annotations

import copy

import torch

from mminfer.kvcache import cache_tensor_bytes, fill_cache, kv_formula_bytes, random_tokens
from mminfer.loading import DTYPES, dtype_name

DEFAULT_DTYPES = ("float32", "bfloat16", "float16")
GIB = 2**30
FORMULA = ("sequences = floor((memory - weights) / (2 x layers x kv_heads x head_dim x bytes x context))")


def torch_dtype(dtype) -> torch.dtype:
    """torch.float32 from "float32" (or a torch.dtype, returned unchanged)."""
    if isinstance(dtype, torch.dtype):
        return dtype
    if dtype not in DTYPES:
        raise ValueError(f"unknown dtype {dtype!r}; one of {', '.join(DTYPES)}")
    return DTYPES[dtype]


def element_size(dtype) -> int:
    """Bytes per element: 4 for float32, 2 for bfloat16 and float16."""
    return torch.empty((), dtype=torch_dtype(dtype)).element_size()


def model_dtype(model) -> torch.dtype:
    return next(model.parameters()).dtype


def kv_formula_per_token(config, bytes_per_element: int) -> int:
    """2 x layers x kv_heads x head_dim x bytes per element: one token's K and V in every layer."""
    return kv_formula_bytes(config.num_hidden_layers, 1, config.num_key_value_heads, config.head_dim,
                            bytes_per_element)


# --- weights ----------------------------------------------------------------------------------------

def unique_parameters(model) -> list[torch.Tensor]:
    """Every parameter once. ``model.parameters()`` already skips a Parameter registered under two names
    (MiniMind's tied embedding: ``embed_tokens.weight is lm_head.weight``); two Parameters sharing
    the same memory are also counted once (keyed on the data pointer)."""
    seen = set()
    params = []
    for param in model.parameters():
        if param.numel() == 0:
            continue
        key = param.data_ptr()
        if key in seen:
            continue
        seen.add(key)
        params.append(param)
    return params


def parameter_count(model) -> int:
    return sum(param.numel() for param in unique_parameters(model))


def weight_bytes(model, dtype) -> int:
    """The weights' bytes in ``dtype``: unique parameters (the tied embedding once) x element size."""
    return parameter_count(model) * element_size(dtype)


def buffer_bytes(model, dtype) -> int:
    """The floating-point buffers' bytes in ``dtype`` (MiniMind: the rotary cos/sin tables,
    2 x max_position_embeddings x head_dim). Reported beside the weights, not in the capacity formula."""
    total = 0
    for buffer in model.buffers():
        if buffer.is_floating_point():
            total += buffer.numel() * element_size(dtype)
    return total


# --- the cache's bytes per token -------------------------------------------------------------------

def measure_bytes_per_token(model, config, dtype, tokens: int, device) -> dict:
    """One dtype's bytes per cached token, measured from a real cache of ``tokens`` random tokens.

    The model is copied and cast (``copy.deepcopy(model).to(dtype)``) unless it already is in that dtype.
    If the forward pass fails in that dtype on this device, the bytes are counted another honest way:
    the elements of the cache of the model as it is, times the dtype's element size; "method" says so.
    """
    target = torch_dtype(dtype)
    input_ids = random_tokens(config.vocab_size, tokens, seed=0).to(device)
    cast = model if model_dtype(model) == target else copy.deepcopy(model).to(target)
    try:
        past_key_values = fill_cache(cast, input_ids)
        total_bytes = cache_tensor_bytes(past_key_values)
        cache_dtype = dtype_name(past_key_values[0][0].dtype)
        method = "forward"
    except (RuntimeError, NotImplementedError) as error:
        past_key_values = fill_cache(model, input_ids)
        elements = sum(tensor.numel() for layer in past_key_values for tensor in layer)
        total_bytes = elements * element_size(target)
        cache_dtype = dtype_name(target)
        method = (f"forward failed in {dtype_name(target)} on {torch.device(device).type} ({error}); "
                  f"elements of the {dtype_name(model_dtype(model))} cache x {element_size(target)} bytes")
    finally:
        del cast
    formula = kv_formula_per_token(config, element_size(target))
    measured = total_bytes // tokens
    return {
        "measured": measured,
        "formula": formula,
        "matches": measured == formula and total_bytes % tokens == 0,
        "tokens": tokens,
        "cache_bytes": total_bytes,
        "cache_dtype": cache_dtype,
        "bytes_per_element": element_size(target),
        "method": method,
    }


def kv_bytes_per_token(model, config, device, dtypes=DEFAULT_DTYPES, tokens: int = 16) -> dict:
    """{dtype: {"measured", "formula", "matches", "cache_dtype", "method", ...}} for each dtype."""
    result = {}
    for dtype in dtypes:
        result[dtype_name(dtype)] = measure_bytes_per_token(model, config, dtype, tokens, device)
    return result


# --- the table ---------------------------------------------------------------------------------------

def capacity_table(bytes_per_token: dict, weight_bytes: dict, memory_gib: list[float],
                   contexts: list[int]) -> list[dict]:
    """One row per dtype x memory x context:

        memory_bytes           = memory_gib x 2^30
        free_bytes             = memory_bytes - weight_bytes[dtype]
        kv_bytes_per_sequence  = bytes_per_token[dtype] x context
        sequences              = floor(free_bytes / kv_bytes_per_sequence), 0 if free_bytes <= 0

    ``bytes_per_token`` and ``weight_bytes`` map a dtype name to bytes (plain integers).
    """
    rows = []
    for dtype, per_token in bytes_per_token.items():
        weights = weight_bytes[dtype]
        for memory in memory_gib:
            memory_bytes = int(memory * GIB)
            free_bytes = memory_bytes - weights
            for context in contexts:
                per_sequence = per_token * context
                sequences = free_bytes // per_sequence if free_bytes > 0 else 0
                rows.append({
                    "dtype": dtype,
                    "memory_gib": memory,
                    "context": context,
                    "kv_bytes_per_sequence": per_sequence,
                    "sequences": sequences,
                    "weight_bytes": weights,
                    "free_bytes": free_bytes,
                })
    return rows


# --- checking the prediction on a real batch -------------------------------------------------------

def storage_bytes(past_key_values) -> int:
    """The bytes of the distinct storages behind the cache's tensors: what the cache really holds,
    even if a tensor were a view into a larger buffer."""
    seen = set()
    total = 0
    for layer_cache in past_key_values:
        for tensor in layer_cache:
            storage = tensor.untyped_storage()
            if storage.data_ptr() in seen:
                continue
            seen.add(storage.data_ptr())
            total += storage.nbytes()
    return total


def check_batch_prediction(model, config, batch: int, context: int, device) -> dict:
    """Fill the cache of ``batch`` random sequences of ``context`` tokens for real and compare its bytes
    with the prediction batch x context x (2 x layers x kv_heads x head_dim x bytes per element).

    On CUDA, "allocator_bytes" is torch.cuda.memory_allocated after - before (the allocator rounds every
    block up to 512 bytes, so it may exceed the tensors' bytes slightly); None elsewhere.
    """
    device = torch.device(device)
    per_token = kv_formula_per_token(config, element_size(model_dtype(model)))
    predicted = batch * context * per_token
    input_ids = random_tokens(config.vocab_size, context, seed=0, batch=batch).to(device)
    allocated_before = torch.cuda.memory_allocated(device) if device.type == "cuda" else None
    past_key_values = fill_cache(model, input_ids)
    allocator_bytes = None
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        allocator_bytes = torch.cuda.memory_allocated(device) - allocated_before
    measured = cache_tensor_bytes(past_key_values)
    return {
        "batch": batch,
        "context": context,
        "measured_bytes": measured,
        "predicted_bytes": predicted,
        "matches": measured == predicted,
        "bytes_per_token": per_token,
        "dtype": dtype_name(past_key_values[0][0].dtype),
        "k_shape": list(past_key_values[0][0].shape),
        "storage_bytes": storage_bytes(past_key_values),
        "allocator_bytes": allocator_bytes,
    }


# --- capacity.json -----------------------------------------------------------------------------------

def resolve_contexts(contexts: list, config) -> list[int]:
    """Context lengths as integers; "max" or "max_position_embeddings" stands for the model's
    max_position_embeddings. Duplicates are dropped, the order kept."""
    resolved = []
    for context in contexts:
        if context in ("max", "max_position_embeddings"):
            context = config.max_position_embeddings
        context = int(context)
        if context not in resolved:
            resolved.append(context)
    return resolved


def capacity(model, config, device, memory_gib: list[float], contexts: list, batch: int, batch_context: int,
             dtypes=DEFAULT_DTYPES, tokens: int = 16) -> dict:
    """capacity.json: measured bytes per token per dtype, the weights' bytes, the table of sequences
    that fit per memory size and context (from the measured bytes per token), and a real batch check
    in the model's own dtype."""
    contexts = resolve_contexts(contexts, config)
    per_token = kv_bytes_per_token(model, config, device, dtypes, tokens)
    weights = {}
    buffers = {}
    for dtype in per_token:
        weights[dtype] = weight_bytes(model, dtype)
        buffers[dtype] = buffer_bytes(model, dtype)
    measured_per_token = {dtype: entry["measured"] for dtype, entry in per_token.items()}
    return {
        "bytes_per_token": per_token,
        "weight_bytes": weights,
        "buffer_bytes": buffers,
        "parameters": parameter_count(model),
        "layers": config.num_hidden_layers,
        "kv_heads": config.num_key_value_heads,
        "head_dim": config.head_dim,
        "max_position_embeddings": config.max_position_embeddings,
        "memory_gib": list(memory_gib),
        "contexts": contexts,
        "rows": capacity_table(measured_per_token, weights, memory_gib, contexts),
        "batch_check": check_batch_prediction(model, config, batch, batch_context, device),
        "formula": FORMULA,
        "note": ("an upper bound: activations, the CUDA context and the allocator also take memory; "
                 "memory_gib is in GiB (2^30 bytes)"),
    }
