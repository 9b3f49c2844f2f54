"""temp.json: distinct answers of the SFT model per temperature. Its record and facts.

temp.json's keys are values: it maps each temperature ("0.3") to a :class:`TemperatureSummary`, and
its record is that mapping (:data:`Temperatures`).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mminfer.records import Answer, ChatPrompt, RunInfo
from mminfer.records.moves import (
    both_ways,
    down_every_step,
    moves,
    never_down_some_up,
    never_moved,
    never_up_some_down,
    up_every_step,
)

if TYPE_CHECKING:
    pass


@dataclass
class TemperatureSummary:
    """One temperature of temp.json: how many of the sampled answers differ."""

    distinct: int
    samples: int
    top_share: float  # the most common answer's share
    distinct_1: float  # distinct characters over all characters of the answers
    distinct_2: float  # distinct character bigrams over all bigrams
    answers: list[Answer]  # most common first
    ids_past_tokenizer: int  # the answers' ids at or past the tokenizer's end, shown as ⟨id N⟩
    prompt: ChatPrompt
    run: RunInfo


Temperatures = dict[str, TemperatureSummary]  # temp.json: "0.3" -> its summary, lowest first


def distinct_counts(temp: Temperatures) -> list[int]:
    """The distinct answers per temperature, in temp.json's order (lowest first)."""
    return [summary.distinct for summary in temp.values()]


def distinct_trend(temp: Temperatures) -> str:
    """The distinct answers, temperatures ascending, move as :func:`trend`'s word says; "one"
    with a single temperature (nothing to compare)."""
    distinct = distinct_counts(temp)
    return trend(distinct) if len(distinct) > 1 else "one"


def distinct_grows(temp: Temperatures) -> bool:
    """More distinct answers at every step up: the sentence on why a higher temperature spreads
    the answers."""
    distinct = distinct_counts(temp)
    return len(distinct) > 1 and all(a < b for a, b in itertools.pairwise(distinct))


def trend(values: list) -> str:
    """Which way a row of values goes: "grows" (each above the one before), "shrinks" (each
    below), "flat" (all equal), "rises" (never below the one before, some equal), "falls" (never
    above, some equal) or "mixed" (up and down)."""
    pairs = list(itertools.pairwise(values))
    if all(a < b for a, b in pairs):
        return "grows"
    if all(a > b for a, b in pairs):
        return "shrinks"
    if all(a == b for a, b in pairs):
        return "flat"
    if all(a <= b for a, b in pairs):
        return "rises"  # never down, not always up
    if all(a >= b for a, b in pairs):
        return "falls"
    return "mixed"


def trend_in_counts(temp: Temperatures, chosen: str) -> bool:
    """temp.trend's and temp.lesson's check: the distinct counts the sentence prints, the
    temperatures taken in ascending order of their values, move as the variant says, by the signs
    of their steps (mminfer.records.moves), apart from :func:`trend`."""
    counts = [temp[key].distinct for key in sorted(temp, key=float)]
    said = {
        "grows": up_every_step(counts),
        "shrinks": down_every_step(counts),
        "flat": never_moved(counts),
        "rises": never_down_some_up(counts) and 0 in moves(counts),
        "falls": never_up_some_down(counts) and 0 in moves(counts),
        "mixed": both_ways(counts),
        "one": len(counts) == 1,
    }
    return said[chosen]


# temp.trend's figures, from the record: the temperatures, the samples, the distinct counts
TEMPERATURES = '{{ temp.keys()|join(" → ") }}'
COUNTS = 'temp.values()|map(attribute="distinct")|join(" → ")'
