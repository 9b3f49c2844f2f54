"""What batch.json decides: each row against its prompt alone, and whether the batch is faster.

Each function takes the record and returns a variant word, from the record's rows and raw rounds;
the batch job writes ``batch_faster`` with :func:`decide_batch_faster`, and the report's sentences,
the glance row and the checker call these again. Pure Python, no torch.
"""

from __future__ import annotations

from mminfer.measures.batch.batch import Batch, BatchRow
from mminfer.records import within_rounding
from mminfer.records.interval import rounds_faster


def row_verdict(row: BatchRow, dtype: str) -> str:
    """One row against its prompt alone: "same" ids; "rounding" (they part where the logit gap
    is within ROUNDING_TOLERANCE: a near-tie); "changed"; "not_finite"."""
    if not row.finite:
        return "not_finite"
    if row.same_ids:
        return "same"
    if within_rounding(row.max_logit_diff, row.max_abs_logit, dtype):
        return "rounding"
    return "changed"


def every_row_same(batch: Batch) -> bool:
    """batch.every_row_same: every masked row's ids are its ids alone, every logit finite."""
    return all(row.same_ids and row.finite for row in batch.rows)


def decide_batch_faster(
    sequential_runs_s: list[float], batch_runs_s: list[float], runs: int, max_runs: int
) -> str:
    """batch.json's ``batch_faster``, from the raw rounds: each round's sequential / batch,
    decided at the level of the timing's looks: "yes", "same", "no" or "undecided"."""
    return rounds_faster(sequential_runs_s, batch_runs_s, runs, max_runs)


def batch_faster(batch: Batch) -> str:
    """:func:`decide_batch_faster` over the record's own rounds."""
    timing = batch.timing
    return decide_batch_faster(
        timing.sequential_runs_s, timing.batch_runs_s, timing.runs, timing.max_runs
    )


def faster(batch: Batch) -> str:
    """batch.faster's variant: :func:`batch_faster` as the sentence says it: "faster", "same",
    "slower" or "undecided"."""
    found = batch_faster(batch)
    if found == "yes":
        return "faster"
    if found == "no":
        return "slower"
    return found


def cheaper(batch: Batch) -> bool:
    """batch.cheaper: the same result (every row as alone) and the batch decided faster."""
    return every_row_same(batch) and batch_faster(batch) == "yes"


def stored_decisions(batch: Batch) -> dict[str, tuple[object, object]]:
    """batch.json's stored decision beside its recomputation from the rounds (the checker's)."""
    return {"timing.batch_faster": (batch.timing.batch_faster, batch_faster(batch))}
