"""The oracles of the sampling side's sentences: temp's trend of distinct answers, batch's time.

Each recomputes its words from the figures and runs the sentence reads, with mminfer.records.moves
(the signs of each step) or mminfer.records.interval, never with the measures' decide.py, whose
functions the sentences call.
``ORACLES[key](records, about)``: tests/oracles.py merges them.
"""

from __future__ import annotations

from mminfer.records import interval
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
    """temp.distinct_trend (## 온도's trend and its lesson): the distinct counts, temperatures
    taken in ascending order of their values, move as the variant says, by their steps' signs."""
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


def batch_speedup(batch) -> str:
    """Each round's sequential / batch, their median's interval at the per-look level: "faster"
    wholly above 1 (outside the 5 % band), "slower" wholly below, "same" within the band."""
    timing = batch.timing
    level = interval.look_level(timing.runs, timing.max_runs)
    ratio = interval.ratio_interval(timing.sequential_runs_s, timing.batch_runs_s, level)
    if not ratio.decisive:
        return "undecided"
    if ratio.low >= 1 / 1.05 and ratio.high <= 1.05:
        return "same"
    if ratio.low > 1:
        return "faster"
    if ratio.high < 1:
        return "slower"
    return "undecided"


def batch_faster(records, about) -> bool:
    """batch.faster: the variant the raw rounds give, and the one batch.json stores."""
    batch = records["batch"]
    stored = {"yes": "faster", "no": "slower"}.get(batch.timing.batch_faster)
    stored = stored or batch.timing.batch_faster
    return batch_speedup(batch) == about["variant"] == stored


def batch_cheaper(records, about) -> bool:
    """batch.cheaper ("같은 결과를 싸게"): every row the same ids and finite, and the raw rounds
    decide the batch faster."""
    batch = records["batch"]
    same = all(row.same_ids and row.finite for row in batch.rows)
    return same and batch_speedup(batch) == "faster"


ORACLES = {
    "batch.faster": batch_faster,
    "batch.cheaper": batch_cheaper,
    "temp.distinct_trend": temp_trend,
}
