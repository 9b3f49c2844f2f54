"""topp.json and topp_detail.json: the candidates top-p leaves. Their records and arithmetic.

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
