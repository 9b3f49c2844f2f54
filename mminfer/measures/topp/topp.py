"""topp.json and topp_detail.json: the candidates top-p leaves. Their records and facts.

topp.json maps each p ("0.9") to a survivor count (:data:`TopP`); topp_detail.json holds both
positions (:class:`TopPDetail`), shown in topp's section.
"""

from __future__ import annotations

from dataclasses import dataclass

from mminfer.records import Glance, RunInfo
from mminfer.records.claims import Claim, claim

TopP = dict[str, int]  # topp.json: "0.5" -> survivors under MiniMind's top-p rule


@dataclass
class TopToken:
    id: int
    token: str
    prob: float


@dataclass
class Position:
    """The next-token distribution after [bos] + prefix."""

    prefix: str
    survivors: TopP
    entropy_bits: float
    top_tokens: list[TopToken]
    sorted_probs: list[float]  # the largest probabilities, descending
    perplexity: float


@dataclass
class TopPDetail:
    """topp_detail.json: both positions, the open one (topp.json) and a sharp one."""

    ps: list[float]
    positions: dict[str, Position]  # "open", "sharp"
    run: RunInfo


def topp_facts(topp: TopP, topp_detail: TopPDetail | None = None) -> dict:
    """Survivors per p after the open prefix; with topp_detail.json, the sharp position beside."""
    detail = topp_detail
    if detail is None:  # a plain run of the task writes topp.json only
        return {
            "survivors": topp,
            "open": None,
            "sharp": None,
            "open_sharper": None,
            "open_examples": [],
            "sharp_examples": [],
        }
    open_position = detail.positions["open"]
    sharp = detail.positions["sharp"]
    more_at_every_p = all(n > sharp.survivors[p] for p, n in topp.items())
    return {
        "survivors": topp,
        "open": open_position,
        "sharp": sharp,
        "open_sharper": more_at_every_p,
        "claims": position_claims(topp, open_position, sharp),
        "open_examples": open_position.top_tokens[:TOP_EXAMPLES],
        "sharp_examples": sharp.top_tokens[:TOP_EXAMPLES],
    }


def position_claims(topp: TopP, open_position: Position, sharp: Position) -> dict[str, Claim]:
    """The two positions' claims: ``wider`` (the open position keeps more at every p, and its
    distribution is the wider: "퍼진 자리에서 많이, 날카로운 자리에서 적게"), ``more_at_every_p``
    (more at every p, the entropies not in that order) and ``not_more`` (not more at every p)."""
    more = all(n > sharp.survivors[p] for p, n in topp.items())
    wider = open_position.entropy_bits > sharp.entropy_bits
    return {
        "wider": claim(
            "topp.wider",
            more and wider,
        ),
        "more_at_every_p": claim(
            "topp.more_at_every_p",
            more,
        ),
        "not_more": claim(
            "topp.not_more",
            not more,
        ),
    }


TOP_EXAMPLES = 5  # the candidates the report names after each prefix (the record's own tokens)


def topp_glance(topp: TopP, topp_detail: TopPDetail | None = None) -> Glance:
    """## top-p's row: the survivors per p; the lesson "wider" (the open position keeps more at
    every p than the sharp one), "not_wider", or "alone" (topp.json only)."""
    facts = topp_facts(topp, topp_detail)
    if facts["open"] is None:
        lesson = "alone"
    elif facts["open_sharper"]:
        lesson = "wider"
    else:
        lesson = "not_wider"
    return Glance(lesson=lesson, terms=("survivor", "entropy"))
