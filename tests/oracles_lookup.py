"""The oracles of lookup.json's sentences: each K's decision recomputed from its rounds against
the one stored, and the ids against the timed rounds (a faster wrong answer is never compared).
``ORACLES[key](records, about)``: tests/oracles.py merges them.
"""

from __future__ import annotations

from oracles_timing import judged_by

from mminfer.measures.lookup import decide
from mminfer.measures.lookup.lookup import Lookup
from mminfer.records.interval import rounds_decision


def ids_supported(lookup: Lookup, chosen: str) -> bool:
    """lookup.ids' check: the variant the ids give, and every K whose ids parted ran no timed
    round (a faster wrong answer is not compared)."""
    parted = [g for case in lookup.cases.values() for g in case.by_guesses if not g.same_ids]
    return decide.ids_found(lookup) == chosen and all(not g.lookup_runs_s for g in parted)


def case_speed_supported(lookup: Lookup, name: str, chosen: str) -> bool:
    """lookup.case_speed's oracle on one case: each timed K's rounds decided again (the cached
    generate's run over the loop's, round by round: above 1, the loop faster) is the decision
    stored, and the variant written is the first of them in precedence: faster, slower, the
    same, undecided."""
    timed = [g for g in lookup.cases[name].by_guesses if g.lookup_runs_s]
    found = [rounds_decision(g.minimind_runs_s, g.lookup_runs_s, g.runs, g.max_runs) for g in timed]
    first = next((word for word in ("above", "below", "same", "undecided") if word in found), None)
    return found == [g.faster for g in timed] and first == chosen


def wide_supported(lookup: Lookup, chosen: str) -> bool:
    """lookup.wide's oracle: the widest K's wide call against its one-token step, each round's
    pair decided again, and the K named the validation case's largest timed one."""
    case = lookup.cases["validation"]
    timed = [g for g in case.by_guesses if g.wide is not None]
    wide = max(timed, key=lambda g: g.guesses).wide
    found = rounds_decision(wide.wide_runs_s, wide.step_runs_s, wide.runs, wide.max_runs)
    return found == chosen


def case_speed(records, about) -> bool:
    """lookup.case_speed, asked once per case (``about["name"]``)."""
    return case_speed_supported(records["lookup"], about["name"], about["variant"])


ORACLES = {
    "lookup.ids_found": judged_by(ids_supported, "lookup"),
    "lookup.wide_found": judged_by(wide_supported, "lookup"),
    "lookup.case_speed": case_speed,
}
