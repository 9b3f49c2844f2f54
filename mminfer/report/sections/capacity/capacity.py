"""## 카드당 사용자 수: capacity.json's facts, glance row and sentences, beside serve's bound."""

from __future__ import annotations

from mminfer.measures.capacity import decide
from mminfer.measures.capacity.capacity import Capacity
from mminfer.measures.serve import decide as serve_decide
from mminfer.records import Glance
from mminfer.records.sentences import Sentence, recomputed


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


# The section's sentences (mminfer.records.sentences): capacity.md.j2 asks say("capacity.formula")
# in its row of ## 한눈에, beside the join's say("capacity.bound") (this module's join).
ALONE_SENTENCES = (
    Sentence(
        "capacity.formula",
        holds=decide.formula_counts,
        words={
            "exact": "캐시 크기는 공식으로 정확히 셀 수 있다",
            "counted": "캐시 크기는 공식으로 센다",
        },
    ),
)


CAPACITY_SENTENCES = (
    Sentence(
        "capacity.bound",
        holds=serve_decide.capacity_bound,
        words={
            "memory": "그 수가 카드당 사용자를 정한다",
            "speed": "그 수는 메모리의 상한이고, 이 기계에서는 속도가 먼저 묶었다",
            "unmeasured": "그 수는 메모리로 본 상한이다(속도는 재지 않았다)",
            "undecided": (
                "그 수는 메모리의 상한이다(속도가 먼저 묶는지는 `## 서빙`의 패스로 가를 수 없었다)"
            ),
        },
        check=recomputed,
    ),
)

# The section's sentences (mminfer.records.sentences), collected by render.sentence_table.
SENTENCES = (*ALONE_SENTENCES, *CAPACITY_SENTENCES)
