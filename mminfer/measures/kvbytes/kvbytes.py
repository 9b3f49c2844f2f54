"""kvbytes.json: the cache's real bytes against the formula. The record."""

from __future__ import annotations

from dataclasses import dataclass

from mminfer.records import RunInfo


@dataclass
class KvBytes:
    """kvbytes.json: the cache's real bytes after feeding random tokens, against the formula."""

    tokens: int
    measured_bytes: int  # the byte sum of every tensor of past_key_values
    formula_bytes: int  # 2 x layers x tokens x KV heads x head_dim x bytes per element
    k_shape: list[int]  # the first layer's K: (batch, tokens, kv_heads, head_dim)
    batch: int
    seed: int
    matches: bool
    layers: int
    kv_heads: int
    heads: int
    head_dim: int
    dtype: str
    bytes_per_element: int
    bytes_per_token: int
    after_repeat_kv_bytes: int  # what the cache would take if it were stored after repeat_kv
    allocator_bytes: int | None  # CUDA only: memory_allocated after - before
    run: RunInfo
