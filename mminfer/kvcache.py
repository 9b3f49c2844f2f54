"""Step 4: the KV cache's real bytes against 2 x layers x tokens x KV heads x head_dim x bytes.

MiniMind caches (K, V) *before* repeat_kv, each (batch, tokens, kv_heads, head_dim): GQA shrinks the
cache by heads / kv_heads against caching after the repeat.
"""

from __future__ import annotations

import torch

from mminfer.loading import dtype_name
from mminfer.records import RunInfo
from mminfer.records.kvbytes import KvBytes


def kv_formula_bytes(
    layers: int, tokens: int, kv_heads: int, head_dim: int, bytes_per_element: int, batch: int = 1
) -> int:
    """2 (K and V) x layers x tokens x KV heads x head_dim x bytes per element (x batch)."""
    return 2 * layers * batch * tokens * kv_heads * head_dim * bytes_per_element


def cache_tensor_bytes(past_key_values) -> int:
    """The byte sum of every tensor in a past_key_values list of (K, V) pairs."""
    total = 0
    for layer_cache in past_key_values:
        for tensor in layer_cache:
            total += tensor.numel() * tensor.element_size()
    return total


def random_tokens(vocab_size: int, tokens: int, seed: int, batch: int = 1) -> torch.Tensor:
    """The task's random tokens: torch.randint(3, vocab, (batch, tokens)).

    They come from a generator seeded with ``seed``; the global RNG is left alone.
    """
    generator = torch.Generator().manual_seed(seed)
    return torch.randint(3, vocab_size, (batch, tokens), generator=generator)


@torch.inference_mode()
def fill_cache(model, config, tokens: int, seed: int, device, batch: int = 1):
    """The cache ``model`` returns for ``batch`` x ``tokens`` random tokens.

    Also what the CUDA allocator grew by while it was made (None on a CPU). The logits and
    activations are freed on return: only the cache stays allocated.
    """
    device = torch.device(device)
    input_ids = random_tokens(config.vocab_size, tokens, seed, batch).to(device)
    allocated_before = torch.cuda.memory_allocated(device) if device.type == "cuda" else None
    past_key_values = model(input_ids, use_cache=True).past_key_values
    allocator_bytes = None
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        allocator_bytes = torch.cuda.memory_allocated(device) - allocated_before
    return past_key_values, allocator_bytes


def measure_kv_bytes(
    model, config, tokens: int, seed: int, device, run: RunInfo, batch: int = 1
) -> KvBytes:
    """kvbytes.json: the cache's real bytes against the formula.

    The byte sum of every tensor of the cache the model returns for ``batch`` x ``tokens`` random
    tokens, the formula's bytes, the first K's shape, the dtype and the sizes.
    """
    past_key_values, allocator_bytes = fill_cache(model, config, tokens, seed, device, batch)
    first_k = past_key_values[0][0]
    bytes_per_element = first_k.element_size()
    measured_bytes = cache_tensor_bytes(past_key_values)
    layers = config.num_hidden_layers
    formula_bytes = kv_formula_bytes(
        layers, tokens, config.num_key_value_heads, config.head_dim, bytes_per_element, batch
    )
    after_repeat_kv_bytes = kv_formula_bytes(
        layers, tokens, config.num_attention_heads, config.head_dim, bytes_per_element, batch
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
