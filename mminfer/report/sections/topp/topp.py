"""## top-p: topp.json's and topp_detail.json's facts and glance row."""

from __future__ import annotations

from mminfer.measures.topp.decide import positions_compared
from mminfer.measures.topp.topp import TopP, TopPDetail
from mminfer.records import Glance


def topp_facts(topp: TopP, topp_detail: TopPDetail | None = None) -> dict:
    """Survivors per p after the open prefix; with topp_detail.json, the sharp position beside."""
    detail = topp_detail
    if detail is None:  # a plain run of the task writes topp.json only
        return {
            "survivors": topp,
            "open": None,
            "sharp": None,
            "open_examples": [],
            "sharp_examples": [],
        }
    open_position = detail.positions["open"]
    sharp = detail.positions["sharp"]
    return {
        "survivors": topp,
        "open": open_position,
        "sharp": sharp,
        "open_examples": open_position.top_tokens[:TOP_EXAMPLES],
        "sharp_examples": sharp.top_tokens[:TOP_EXAMPLES],
    }


TOP_EXAMPLES = 5  # the candidates the report names after each prefix (the record's own tokens)


def topp_glance(topp: TopP, topp_detail: TopPDetail | None = None) -> Glance:
    """## top-p's row: the survivors per p; its lesson the variant of
    topp.positions_compared ("alone" with one position)."""
    terms = ("survivor",) if topp_detail is None else ("survivor", "entropy")
    return Glance(lesson=positions_compared(topp, topp_detail) or "alone", terms=terms)
