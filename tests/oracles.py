"""The tests' own judges of the report's claims: one oracle per claim key (mminfer.records.claims).

An oracle reads the literal words of the claim's sentence and checks them against the record's raw
numbers (the batches' tokens per second, the runs' seconds, the steps' clocked flags), never
against the facts' intermediate values, so a facts function that chose the wrong branch, or a
predicate that reads less than its words say, is caught. ``ORACLES[key](records, about)`` is True
where the sentence, with the figures it cites (``about``), is true of ``records`` (render_report's
mapping, by measurement name).

A converted section's sentence (mminfer.records.sentences) is written only where the predicate
beside its words holds on the records themselves; it keeps an oracle only where one recomputes
its words from the raw runs independently of that predicate, and is otherwise not judged again.

Each measurement's oracles live in a module of their own (tests/oracles_<topic>.py), merged here.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping

from oracles_anatomy import ORACLES as ANATOMY_ORACLES
from oracles_latency import ORACLES as LATENCY_ORACLES
from oracles_sampling import ORACLES as SAMPLING_ORACLES
from oracles_timing import ORACLES as TIMING_ORACLES

from mminfer.report.render import sentence_table


def grew_by(before, after, growth: float) -> bool:
    """Tokens per second rose by more than ``growth`` per doubling of the batch, from the rows'
    own batch and decode step."""
    doublings = math.log2(after.batch / before.batch)
    rate_before = before.batch / before.decode_step_s
    rate_after = after.batch / after.decode_step_s
    return rate_after > rate_before * (1 + growth) ** doublings


def serve_every_doubling_grew(records: Mapping, about: Mapping) -> bool:
    """Every step up grew: "잰 가장 큰 배치 B = {last}까지 배치를 두 배로 할 때마다 초당 토큰이
    {growth} 넘게 늘었다"."""
    rows = records["serve"].batches
    pairs = list(itertools.pairwise(rows))
    return (
        about["last"] == rows[-1].batch
        and bool(pairs)
        and all(grew_by(a, b, about["growth"]) for a, b in pairs)
    )


def serve_growth_stops_from(records: Mapping, about: Mapping) -> bool:
    """ "B = {batch}부터는 배치를 두 배로 해도 초당 토큰이 {growth} 넘게 늘지 않는다(그때 한 단계
    {step_s})": a measured batch below the largest, from which no step up grew so."""
    rows = records["serve"].batches
    batch = about["batch"]
    at = [row for row in rows if row.batch == batch]
    later = [row for row in rows if row.batch >= batch]
    return (
        len(at) == 1
        and batch < rows[-1].batch
        and at[0].decode_step_s == about["step_s"]
        and not any(grew_by(a, b, about["growth"]) for a, b in itertools.pairwise(later))
    )


def serve_growth_mixed(records: Mapping, about: Mapping) -> bool:
    """ "초당 토큰이 {growth} 넘게 는 곳도 있었지만, B = {not_grown}에서는 그만큼 늘지 않았다":
    some step up grew so, and exactly the named ones did not."""
    rows = records["serve"].batches
    pairs = list(itertools.pairwise(rows))
    growth = about["growth"]
    not_grown = [(a.batch, b.batch) for a, b in pairs if not grew_by(a, b, growth)]
    return (
        any(grew_by(a, b, growth) for a, b in pairs)
        and [tuple(pair) for pair in about["not_grown"]] == not_grown
        and bool(not_grown)
    )


ORACLES: dict[str, Callable[[Mapping, Mapping], bool]] = (
    {
        "serve.every_doubling_grew": serve_every_doubling_grew,
        "serve.growth_stops_from": serve_growth_stops_from,
        "serve.growth_mixed": serve_growth_mixed,
    }
    | TIMING_ORACLES
    | SAMPLING_ORACLES
    | LATENCY_ORACLES
    | ANATOMY_ORACLES
)


def denied(records: Mapping, claims) -> list[str]:
    """The claims the report wrote that their oracle denies (each with the figures it cited)."""
    found = []
    for claim in claims.rendered:
        oracle = ORACLES.get(claim.key)
        if oracle is None and claim.key in sentence_table():
            continue  # its predicate, beside its words, decided it on the records themselves
        if oracle is None:
            found.append(f"{claim.key}: no oracle in tests/oracles.py")
        elif not oracle(records, claim.about):
            found.append(f"{claim.key} {dict(claim.about)}")
    return found
