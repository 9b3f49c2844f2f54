"""count.json: the tokens fed into forward both ways. Record, facts."""

from __future__ import annotations

from dataclasses import dataclass

from mminfer.records import PretrainPrompt, RunInfo, token_ratio
from mminfer.records.sentences import Sentence


@dataclass
class Count:
    """count.json: the tokens fed into forward by each method, beside their formulas."""

    prompt_len: int
    new_tokens: int
    fed_with_cache: int
    fed_without_cache: int
    formula_with_cache: int  # P + (N - 1)
    formula_without_cache: int  # N * P + N (N - 1) / 2
    calls_with_cache: int
    calls_without_cache: int
    prompt: PretrainPrompt
    run: RunInfo


def count_facts(count: Count) -> dict:
    """count.json: the tokens fed both ways (the formulas' values are in the record)."""
    return vars(count) | {"token_ratio": token_ratio(count)}


def counts_differ(count: Count) -> bool:
    """Either method's count is not its formula's value."""
    return (
        count.fed_with_cache != count.formula_with_cache
        or count.fed_without_cache != count.formula_without_cache
    )


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
