"""## KV 캐시's tokens fed: count.json's facts (the words: its template), beside their formulas."""

from __future__ import annotations

from mminfer.measures.cache.count import Count
from mminfer.records import token_ratio


def count_facts(count: Count) -> dict:
    """count.json: the tokens fed both ways (the formulas' values are in the record)."""
    return vars(count) | {"token_ratio": token_ratio(count)}
