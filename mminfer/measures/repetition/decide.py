"""What repetition.json decides: how the distinct answers and greedy's repeats move as the
penalty grows, whether any penalty changed an answer, and the penalty's cost.

Each function takes the record and returns a variant word or whether its words hold; the cost
from the raw rounds. The repetition job writes ``penalty_costs`` with
:func:`decide_penalty_costs`; the report's sentences, glance row and the checker call these
again. Pure Python, no torch.
"""

from __future__ import annotations

import itertools

from mminfer.measures.repetition.repetition import Repetition
from mminfer.records.interval import rounds_faster


def decide_penalty_costs(
    with_penalty_runs_s: list[float], without_penalty_runs_s: list[float], runs: int, max_runs: int
) -> str:
    """repetition.json's ``penalty_costs``, from the paired rounds (each round's with / without):
    "yes" (the penalty costs time), "no", "same" or "undecided"."""
    return rounds_faster(with_penalty_runs_s, without_penalty_runs_s, runs, max_runs)


def trend(counts: list[int]) -> str:
    """How counts move in order: "more" (never down, up in all), "fewer", "same" or "mixed"."""
    steps = [b - a for a, b in itertools.pairwise(counts)]
    if all(step == 0 for step in steps):
        return "same"
    if all(step >= 0 for step in steps):
        return "more"
    if all(step <= 0 for step in steps):
        return "fewer"
    return "mixed"


def changed_from_off(repetition: Repetition) -> str | None:
    """repetition.changes_answers: "changed" where some penalty's sampled answers or greedy ids
    differ from penalty 1.0's, "nothing" where none does; None without 1.0 and another."""
    penalties = repetition.penalties
    off = penalties.get("1.0")
    if off is None or len(penalties) < 2:
        return None
    off_answers = [(a.answer, a.count) for a in off.answers]
    for penalty in penalties.values():
        answers = [(a.answer, a.count) for a in penalty.answers]
        if answers != off_answers or penalty.greedy_ids != off.greedy_ids:
            return "changed"
    return "nothing"


def ascending_values(repetition: Repetition, name: str) -> list:
    """A field of every penalty, penalties in ascending order."""
    ascending = sorted(repetition.penalties, key=float)
    return [getattr(repetition.penalties[key], name) for key in ascending]


def distinct_trend(repetition: Repetition) -> str | None:
    """repetition.distinct_trend: how the distinct answers move as the penalty grows
    (:func:`trend`); None for one penalty."""
    counts = ascending_values(repetition, "distinct")
    return trend(counts) if len(counts) > 1 else None


def greedy_repeats_trend(repetition: Repetition) -> str | None:
    """repetition.greedy_repeats_trend: how greedy's repeated n-grams move as the penalty grows;
    None for one penalty."""
    repeats = ascending_values(repetition, "greedy_repeated_ngrams")
    return trend(repeats) if len(repeats) > 1 else None


def samples_never_loop(repetition: Repetition) -> bool:
    """repetition.samples_never_loop: no sampled answer loops at any penalty."""
    return all(penalty.looping == 0 for penalty in repetition.penalties.values())


COSTS = {"yes": "share", "same": "same", "no": "not_slower", "undecided": "undecided"}


def penalty_costs(repetition: Repetition) -> str | None:
    """:func:`decide_penalty_costs` over the record's own rounds; None untimed."""
    timing = repetition.timing
    if timing is None:
        return None
    return decide_penalty_costs(
        timing.with_penalty_runs_s, timing.without_penalty_runs_s, timing.runs, timing.max_runs
    )


def cost_of(repetition: Repetition) -> str | None:
    """repetition.share's variant, from the paired rounds (:func:`penalty_costs`): "share"
    (above 0), "same", "not_slower", "undecided"; None untimed."""
    found = penalty_costs(repetition)
    if found is None:
        return None
    return COSTS[found]


def stored_decisions(repetition: Repetition) -> dict[str, tuple[object, object]]:
    """repetition.json's stored decision (``penalty_costs``) beside its recomputation from the
    rounds (the checker's); none where the penalty was not timed."""
    if repetition.timing is None:
        return {}
    return {"timing.penalty_costs": (repetition.timing.penalty_costs, penalty_costs(repetition))}
