"""capacity.json: how many sequences' caches fit on a card. Its record, facts and sentences."""

from __future__ import annotations

from dataclasses import dataclass

from mminfer.records import Glance, RunInfo
from mminfer.records.sentences import Sentence


@dataclass
class DtypeBytes:
    """One cached token's bytes in one dtype, measured on a real cache."""

    measured: int | None  # None: this dtype's forward failed on the device (error says why)
    formula: int
    matches: bool
    error: str | None


@dataclass
class CapacityRow:
    dtype: str
    memory_gib: float
    context: int
    kv_bytes_per_sequence: int | None
    free_bytes: int
    sequences: int | None


@dataclass
class BatchCheck:
    """A real cache of ``batch`` sequences against the prediction."""

    batch: int
    context: int
    measured_bytes: int
    predicted_bytes: int
    matches: bool
    k_shape: list[int]


@dataclass
class Capacity:
    """capacity.json: how many sequences' caches fit on a card."""

    bytes_per_token: dict[str, DtypeBytes]
    weight_bytes: dict[str, int]  # every parameter in memory, in each dtype
    parameters: int  # all of them: every expert of a MoE model
    active_parameters: int  # those one token runs through
    experts: int | None  # per layer, in a MoE model
    experts_per_token: int | None
    layers: int
    kv_heads: int
    head_dim: int
    memory_gib: list[float]
    contexts: list[int]
    rows: list[CapacityRow]
    batch_check: BatchCheck
    formula: str
    run: RunInfo


def capacity_facts(capacity: Capacity) -> dict:
    """capacity.json's table. Which bound decides the users per card reads serve.json: the
    sentence capacity.bound, the report's join (mminfer.report.joins)."""
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
    lesson = "matches" if capacity.batch_check.matches else "differs"
    return Glance(lesson=lesson, terms=("user", "context"))


def formula_counts(capacity: Capacity) -> str:
    """ "exact": every dtype's bytes a token and a real batch's cache are the formula's;
    "counted": not all of them."""
    check = capacity.batch_check
    exact = check.measured_bytes == check.predicted_bytes and all(
        per_token.measured == per_token.formula for per_token in capacity.bytes_per_token.values()
    )
    return "exact" if exact else "counted"


# The section's sentences (mminfer.records.sentences): capacity.md.j2 asks say("capacity.formula")
# in its row of ## 한눈에, beside the join's say("capacity.bound") (mminfer.report.joins).
SENTENCES = (
    Sentence(
        "capacity.formula",
        holds=formula_counts,
        words={
            "exact": "캐시 크기는 공식으로 정확히 셀 수 있다",
            "counted": "캐시 크기는 공식으로 센다",
        },
    ),
)
