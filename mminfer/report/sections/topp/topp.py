"""## top-p: topp.json's and topp_detail.json's facts, glance row and sentences."""

from __future__ import annotations

from mminfer.measures.topp.decide import positions_compared
from mminfer.measures.topp.topp import TopP, TopPDetail
from mminfer.records import Glance
from mminfer.records.sentences import Sentence


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
    """## top-p's row: the survivors per p; its lesson the sentence topp.lesson's variant."""
    terms = ("survivor",) if topp_detail is None else ("survivor", "entropy")
    return Glance(lesson=positions_compared(topp, topp_detail) or "alone", terms=terms)


# The section's sentences (mminfer.records.sentences): topp.md.j2 asks say("topp.positions") under
# the table's lead and say("topp.lesson") in its row of ## 한눈에.
SENTENCES = (
    Sentence(
        "topp.positions",
        holds=positions_compared,
        words={
            "wider": "top-p는 분포가 퍼진 자리에서 많이, 날카로운 자리에서 적게 남긴다.",
            "more": "열린 자리가 모든 p에서 더 많이 남겼다(엔트로피는 그 순서가 아니다: 아래).",
            "not_more": "이 모델에서는 열린 자리가 모든 p에서 더 많이 남기지는 않았다.",
        },
    ),
    Sentence(
        "topp.lesson",
        holds=lambda topp, topp_detail: positions_compared(topp, topp_detail) or "alone",
        words={
            "wider": "열린 자리에서는 top-p가 많은 후보를 남긴다",
            "more": "열린 자리가 모든 p에서 더 많이 남겼다",
            "not_more": "열린 자리가 모든 p에서 더 많이 남기지는 않았다",
            "alone": "p마다 남는 후보 수(위치 하나만 쟀다)",
        },
    ),
)
