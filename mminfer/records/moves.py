"""Which way a row of printed figures moves, from the signs of its steps: the direction checks.

A decision worded as a figure that grew, fell or stayed (temp.distinct_trend,
repetition.distinct_trend, ...) is judged by the suite's oracles (tests/oracles_*.py) against the
signs of the steps between the figures it prints, recomputed from the record here, apart from the
decide.py function that chose the words. Pure Python, no torch.
"""

from __future__ import annotations

import itertools


def moves(values: list[float]) -> set[int]:
    """The signs of the steps between successive values: {1} every step up, {-1, 0} never up
    and some flat, empty for fewer than two values."""
    signs = set()
    for earlier, later in itertools.pairwise(values):
        signs.add((later > earlier) - (later < earlier))
    return signs


def up_every_step(values: list[float]) -> bool:
    return len(values) > 1 and moves(values) == {1}


def down_every_step(values: list[float]) -> bool:
    return len(values) > 1 and moves(values) == {-1}


def never_moved(values: list[float]) -> bool:
    return len(values) > 1 and moves(values) == {0}


def never_down_some_up(values: list[float]) -> bool:
    return 1 in moves(values) and -1 not in moves(values)


def never_up_some_down(values: list[float]) -> bool:
    return -1 in moves(values) and 1 not in moves(values)


def both_ways(values: list[float]) -> bool:
    return {1, -1} <= moves(values)
