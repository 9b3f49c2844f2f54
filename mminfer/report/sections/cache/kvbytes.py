"""## KV 캐시's bytes: kvbytes.json's facts (the words: its template), against the formula."""

from __future__ import annotations

from mminfer.measures.kvbytes.kvbytes import KvBytes


def kvbytes_facts(kvbytes: KvBytes) -> dict:
    return vars(kvbytes) | {
        "k_shape": tuple(kvbytes.k_shape),
        # how much larger the cache would be after repeat_kv
        "repeat": kvbytes.heads // kvbytes.kv_heads,
    }
