"""A KV cache's bytes: the formula, the bytes of a real cache's tensors, and what fits in memory.

The formula is 2 (K and V) x layers x tokens x KV heads x head_dim x bytes per element (x batch);
a real cache is filled from the task's random tokens.
"""

from __future__ import annotations

import torch

GIB = 2**30


def kv_formula_bytes(
    *,
    layers: int,
    tokens: int,
    kv_heads: int,
    head_dim: int,
    bytes_per_element: int,
    batch: int = 1,
) -> int:
    """2 (K and V) x layers x tokens x KV heads x head_dim x bytes per element (x batch)."""
    return 2 * layers * batch * tokens * kv_heads * head_dim * bytes_per_element


def config_formula_bytes(*, config, tokens: int, bytes_per_element: int, batch: int = 1) -> int:
    """:func:`kv_formula_bytes` with the layers, KV heads and head_dim of a model's ``config``."""
    return kv_formula_bytes(
        layers=config.num_hidden_layers,
        tokens=tokens,
        kv_heads=config.num_key_value_heads,
        head_dim=config.head_dim,
        bytes_per_element=bytes_per_element,
        batch=batch,
    )


def cache_tensor_bytes(past_key_values) -> int:
    """The byte sum of every tensor in a past_key_values list of (K, V) pairs."""
    total = 0
    for layer_cache in past_key_values:
        for tensor in layer_cache:
            total += tensor.numel() * tensor.element_size()
    return total


def random_tokens(*, vocab_size: int, tokens: int, seed: int, batch: int = 1) -> torch.Tensor:
    """The task's random tokens: torch.randint(3, vocab, (batch, tokens)).

    They come from a generator seeded with ``seed``; the global RNG is left alone.
    """
    generator = torch.Generator().manual_seed(seed)
    return torch.randint(3, vocab_size, (batch, tokens), generator=generator)


@torch.inference_mode()
def fill_cache(*, model, config, tokens: int, seed: int, device, batch: int = 1):
    """The cache ``model`` returns for ``batch`` x ``tokens`` random tokens.

    Also what the CUDA allocator grew by while it was made (None on a CPU). The logits and
    activations are freed on return: only the cache stays allocated.
    """
    device = torch.device(device)
    input_ids = random_tokens(
        vocab_size=config.vocab_size, tokens=tokens, seed=seed, batch=batch
    ).to(device)
    allocated_before = torch.cuda.memory_allocated(device) if device.type == "cuda" else None
    past_key_values = model(input_ids, use_cache=True).past_key_values
    allocator_bytes = None
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        allocator_bytes = torch.cuda.memory_allocated(device) - allocated_before
    return past_key_values, allocator_bytes


def sequences_that_fit(free_bytes: int, bytes_per_sequence: int | None) -> int | None:
    """floor(free / per sequence); 0 when nothing is free; None when the bytes are unknown."""
    if bytes_per_sequence is None:
        return None
    if free_bytes <= 0:
        return 0
    return free_bytes // bytes_per_sequence
