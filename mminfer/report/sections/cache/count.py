"""## KV 캐시's tokens fed: count.json's facts and sentences, beside their formulas."""

from __future__ import annotations

from mminfer.measures.cache.count import Count
from mminfer.measures.cache.decide import counts_differ
from mminfer.records import token_ratio
from mminfer.records.sentences import Sentence


def count_facts(count: Count) -> dict:
    """count.json: the tokens fed both ways (the formulas' values are in the record)."""
    return vars(count) | {"token_ratio": token_ratio(count)}


# The section's sentences (mminfer.records.sentences): count.md.j2 asks
# say("count.differs_from_formula") above its formulas; the words end the paragraph's blank line.
SENTENCES = (
    Sentence(
        "count.differs_from_formula",
        holds=counts_differ,
        words=(
            "**`forward`에 넣은 토큰이 공식과 다르다**: 캐시 사용"
            " {{ count.fed_with_cache|thousands }}"
            "(공식 {{ count.formula_with_cache|thousands }}), 미사용"
            " {{ count.fed_without_cache|thousands }}"
            "(공식 {{ count.formula_without_cache|thousands }}).\n\n"
        ),
    ),
)
