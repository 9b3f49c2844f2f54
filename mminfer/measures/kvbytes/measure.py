"""Step 4: the KV cache's real bytes against 2 x layers x tokens x KV heads x head_dim x bytes.

MiniMind caches (K, V) *before* repeat_kv, each (batch, tokens, kv_heads, head_dim): GQA shrinks the
cache by heads / kv_heads against caching after the repeat.
"""

from __future__ import annotations

from mminfer.measures.kvbytes.kvbytes import KvBytes
from mminfer.model.cachebytes import cache_tensor_bytes, fill_cache, kv_formula_bytes
from mminfer.model.loading import dtype_name
from mminfer.records import RunInfo


def measure_kv_bytes(
    *, model, config, tokens: int, seed: int, device, run: RunInfo, batch: int = 1
) -> KvBytes:
    """kvbytes.json: the cache's real bytes against the formula.

    The byte sum of every tensor of the cache the model returns for ``batch`` x ``tokens`` random
    tokens, the formula's bytes, the first K's shape, the dtype and the sizes.
    """
    past_key_values, allocator_bytes = fill_cache(
        model=model, config=config, tokens=tokens, seed=seed, device=device, batch=batch
    )
    first_k = past_key_values[0][0]
    bytes_per_element = first_k.element_size()
    measured_bytes = cache_tensor_bytes(past_key_values)
    layers = config.num_hidden_layers
    formula_bytes = kv_formula_bytes(
        layers=layers,
        tokens=tokens,
        kv_heads=config.num_key_value_heads,
        head_dim=config.head_dim,
        bytes_per_element=bytes_per_element,
        batch=batch,
    )
    after_repeat_kv_bytes = kv_formula_bytes(
        layers=layers,
        tokens=tokens,
        kv_heads=config.num_attention_heads,
        head_dim=config.head_dim,
        bytes_per_element=bytes_per_element,
        batch=batch,
    )
    return KvBytes(
        tokens=tokens,
        measured_bytes=measured_bytes,
        formula_bytes=formula_bytes,
        k_shape=list(first_k.shape),
        batch=batch,
        seed=seed,
        matches=measured_bytes == formula_bytes,
        layers=layers,
        kv_heads=config.num_key_value_heads,
        heads=config.num_attention_heads,
        head_dim=config.head_dim,
        dtype=dtype_name(first_k.dtype),
        bytes_per_element=bytes_per_element,
        bytes_per_token=measured_bytes // (batch * tokens),
        after_repeat_kv_bytes=after_repeat_kv_bytes,
        allocator_bytes=allocator_bytes,
        run=run,
    )
