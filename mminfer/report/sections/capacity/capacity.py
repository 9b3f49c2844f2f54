"""## 카드당 사용자 수: capacity.json's facts and glance row, beside serve's bound."""

from __future__ import annotations

from mminfer.measures.capacity import decide
from mminfer.measures.capacity.capacity import Capacity
from mminfer.records import Glance


def capacity_facts(capacity: Capacity) -> dict:
    """capacity.json's table. Which bound decides the users per card reads serve.json: the
    sentence capacity.bound, this module's join."""
    by_key = {}
    for row in capacity.rows:
        by_key[(row.dtype, row.context, row.memory_gib)] = row.sequences
    table = []
    for dtype in capacity.bytes_per_token:
        for context in capacity.contexts:
            sequences = [by_key[(dtype, context, memory)] for memory in capacity.memory_gib]
            table.append((dtype, context, sequences))
    positions = capacity.run.config["max_position_embeddings"]
    return vars(capacity) | {
        "table": table,
        "positions": positions,  # the model's max_position_embeddings
        "beyond_positions": [context for context in capacity.contexts if context > positions],
        "batch_matches": capacity.batch_check.matches,
        "moe": capacity.experts is not None,
    }


def capacity_glance(capacity: Capacity) -> Glance:
    """## 카드당 사용자 수's row: the lesson "matches" (a real batch's cache is the prediction) or
    "differs"."""
    return Glance(lesson=decide.batch_matches(capacity), terms=("user", "context"))
