"""The oracles of the sampling side's direction sentences: temp's trend of distinct answers.

Each recomputes its words from the counts the sentence prints, with mminfer.records.moves (the
signs of each step), never with mminfer.measures.temp.decide, whose functions the sentences call.
``ORACLES[key](records, about)``: tests/oracles.py merges them.
"""

from __future__ import annotations

from mminfer.records.moves import (
    both_ways,
    down_every_step,
    moves,
    never_down_some_up,
    never_moved,
    never_up_some_down,
    up_every_step,
)


def temp_trend(records, about) -> bool:
    """temp.trend and temp.lesson: the distinct counts, temperatures taken in ascending order of
    their values, move as the variant says, by the signs of their steps."""
    temp = records["temp"]
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
    return said[about["variant"]]


ORACLES = {
    "temp.trend": temp_trend,
    "temp.lesson": temp_trend,
}
