"""topp.json and topp_detail.json: the candidates top-p leaves. Their records, facts, sentences.

topp.json maps each p ("0.9") to a survivor count (:data:`TopP`); topp_detail.json holds both
positions (:class:`TopPDetail`), shown in topp's section.
"""

from __future__ import annotations

from dataclasses import dataclass

from mminfer.records import RunInfo

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


def positions_compared(topp: TopP, topp_detail: TopPDetail | None) -> str | None:
    """The open position against the sharp one: "wider" (it keeps more at every p, and its
    distribution is the wider), "more" (more at every p, the entropies not in that order),
    "not_more" (not more at every p); None without topp_detail.json."""
    if topp_detail is None:
        return None
    open_position = topp_detail.positions["open"]
    sharp = topp_detail.positions["sharp"]
    more = all(n > sharp.survivors[p] for p, n in topp.items())
    wider = open_position.entropy_bits > sharp.entropy_bits
    if more and wider:
        return "wider"
    if more:
        return "more"
    return "not_more"
