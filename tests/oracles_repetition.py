"""The oracles of repetition.json's sentences: the counts, penalties ascending by value, by the
signs of their steps (mminfer.records.moves), and the cost from the rounds at the level of their
looks, never with mminfer.measures.repetition.decide, which the sentences call.
``ORACLES[key](records, about)``: tests/oracles.py merges them.
"""

from __future__ import annotations

from oracles_timing import judged_by

from mminfer.measures.repetition.repetition import Repetition
from mminfer.records.interval import look_level, ratio_decision, ratio_interval
from mminfer.records.moves import both_ways, never_down_some_up, never_moved, never_up_some_down


def counts_move(values: list, chosen: str) -> bool:
    """Whether ``values`` (penalties ascending) move as a trend's variant says, by the signs of
    their steps (mminfer.records.moves), apart from :func:`trend`."""
    said = {
        "more": never_down_some_up(values),
        "fewer": never_up_some_down(values),
        "same": never_moved(values),
        "mixed": both_ways(values),
    }
    return said[chosen]


def distinct_in_counts(repetition: Repetition, chosen: str) -> bool:
    """repetition.distinct_trend's check: the distinct answers printed, penalties ascending by
    value."""
    ascending = sorted(repetition.penalties, key=float)
    return counts_move([repetition.penalties[key].distinct for key in ascending], chosen)


def greedy_repeats_in_counts(repetition: Repetition, chosen: str) -> bool:
    """repetition.greedy_repeats_trend's check: greedy's repeated n-grams printed, penalties
    ascending by value."""
    ascending = sorted(repetition.penalties, key=float)
    counts = [repetition.penalties[key].greedy_repeated_ngrams for key in ascending]
    return counts_move(counts, chosen)


def cost_in_runs(repetition: Repetition, chosen: str) -> bool:
    """repetition.share's check: the variant the raw runs give, recomputed from the rounds
    (each round's with / without, at the level of its looks), is the one written."""
    timing = repetition.timing
    with_runs = timing.with_penalty_runs_s
    without_runs = timing.without_penalty_runs_s
    level = look_level(timing.runs, timing.max_runs)
    ratio = ratio_interval(with_runs, without_runs, level)
    found = {"above": "share", "same": "same", "below": "not_slower", "undecided": "undecided"}
    return found[ratio_decision(ratio)] == chosen


ORACLES = {
    "repetition.distinct_trend": judged_by(distinct_in_counts, "repetition"),
    "repetition.greedy_repeats_trend": judged_by(greedy_repeats_in_counts, "repetition"),
    "repetition.cost_of": judged_by(cost_in_runs, "repetition"),
}
