"""count.json: the tokens fed into forward both ways. Record, facts."""

from __future__ import annotations

from dataclasses import dataclass

from mminfer.records import PretrainPrompt, RunInfo, token_ratio
from mminfer.records.claims import claim


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
    return vars(count) | {"token_ratio": token_ratio(count), "differs": differs_claim(count)}


def differs_claim(count: Count):
    """ "`forward`에 넣은 토큰이 공식과 다르다": either method's count is not its formula's value,
    the counts and the values cited."""
    differs = (
        count.fed_with_cache != count.formula_with_cache
        or count.fed_without_cache != count.formula_without_cache
    )
    return claim(
        "count.differs_from_formula",
        differs,
        fed_with_cache=count.fed_with_cache,
        fed_without_cache=count.fed_without_cache,
        formula_with_cache=count.formula_with_cache,
        formula_without_cache=count.formula_without_cache,
    )
