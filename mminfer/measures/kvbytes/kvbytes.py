"""kvbytes.json: the cache's real bytes against the formula. Its record and facts."""

from __future__ import annotations

from dataclasses import dataclass

from mminfer.records import RunInfo
from mminfer.records.claims import claim


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


def kvbytes_facts(kvbytes: KvBytes) -> dict:
    return vars(kvbytes) | {
        "bytes_match": kvbytes.measured_bytes == kvbytes.formula_bytes,
        # "캐시의 실제 바이트는 공식과 정확히 같다"
        "bytes_equal": claim(
            "kvbytes.bytes_equal", kvbytes.measured_bytes == kvbytes.formula_bytes
        ),
        "k_shape": tuple(kvbytes.k_shape),
        # how much larger the cache would be after repeat_kv
        "repeat": kvbytes.heads // kvbytes.kv_heads,
    }
