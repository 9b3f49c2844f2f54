"""The sampling side's claims held to their oracles (tests/oracles_sampling.py), on records of
every shape a run can give.

Each strategy builds its records through the project's own constructors (tests/reportdata.py's
records read back by from_json; timings judged by mminfer.measures.time.measure's rules from the
runs drawn),
renders the whole report and asserts that no claim it wrote is denied: counts rising, falling,
flat and mixed; one temperature, penalty or p and many; timings quiet, noisy and untrusted; a
time to first token that falls as the prompt grows. A planted wrong branch shows that they catch
what the golden cases miss.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from oracles import denied
from reportdata import (
    RUN,
    batch_timed,
    conversation_timed,
    every_record,
    position,
    repetition_timed,
    sampler_record,
    temp_record,
    topk_record,
)

import mminfer.measures.batch.batch as batch_records
from mminfer.measures.batch.batch import Batch
from mminfer.measures.topp.topp import TopPDetail
from mminfer.records import from_json, to_json
from mminfer.records.claims import ClaimLog, claim
from mminfer.report.render import render_report

PROPERTY = settings(
    max_examples=30,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
FIND = settings(PROPERTY, phases=[Phase.generate])  # a planted error: found, not shrunk

COUNTS = st.integers(min_value=1, max_value=30)
JITTER = st.sampled_from([1.0, 1.0, 0.99, 1.01, 1.05, 1.3, 3.0, 8.0])  # quiet to a busy machine


def check(records: dict) -> None:
    log = ClaimLog()
    render_report(records, claims=log)
    assert denied(records, log) == []


@st.composite
def two_sides(draw) -> tuple[list[float], list[float]]:
    """(the slower side's runs, the faster side's), as many each (the rounds alternate them):
    one run or several, quiet or spread; apart, close, the same, or swapped."""
    slow = draw(st.floats(min_value=0.01, max_value=1.0))
    ratio = draw(st.sampled_from([0.25, 0.5, 0.87, 0.95, 1.0, 1.1]))
    count = draw(st.integers(min_value=1, max_value=5))
    slower = [slow * draw(JITTER) for _ in range(count)]
    faster = [slow * ratio * draw(JITTER) for _ in range(count)]
    return slower, faster


# --- temp, topp, sampler, topk ---------------------------------------------------------------


def topp_detail_of(topp: dict, sharp: list[int], entropies: tuple[float, float]) -> TopPDetail:
    detail = {
        "ps": [float(p) for p in topp],
        "positions": {
            "open": position("민수는", topp, entropies[0]),
            "sharp": position("가람 마을의 특산물은", dict(zip(topp, sharp)), entropies[1]),
        },
        "run": RUN,
    }
    return from_json(TopPDetail, detail)


@st.composite
def sampling_records(draw) -> dict:
    """temp, topp, topp_detail, sampler and topk.json of every shape, beside each other."""
    temperatures = draw(st.integers(min_value=1, max_value=3))
    distinct = tuple(draw(COUNTS) for _ in range(temperatures))
    topk_distinct = tuple(draw(COUNTS) for _ in range(3))
    without = sorted(draw(st.integers(min_value=1, max_value=200)) for _ in range(3))
    topp = dict(zip(("0.5", "0.9", "0.99"), without))
    survivors = [min(50, draw(st.integers(min_value=1, max_value=n))) for n in without]
    sharp = [draw(st.integers(min_value=1, max_value=60)) for _ in without]
    entropies = draw(st.sampled_from([(6.1, 0.4), (0.4, 6.1), (2.0, 2.0)]))
    identical = draw(st.sampled_from([30, 30, 29, 12]))
    differ = draw(st.sampled_from([0, 1, 28]))
    mass = draw(st.sampled_from([0.6, 0.802, 1.0]))
    return every_record(
        temp=temp_record(distinct),
        topp=topp,
        topp_detail=topp_detail_of(topp, sharp, entropies),
        sampler=sampler_record(identical=identical, differ=differ),
        topk=topk_record(distinct=topk_distinct, topp=tuple(survivors), mass=mass),
    )


@PROPERTY
@given(sampling_records())
def test_temp_topp_sampler_and_topk_write_only_claims_their_records_support(records):
    check(records)


# --- repetition ---------------------------------------------------------------------------------


@st.composite
def repetition_records(draw) -> dict:
    """repetition.json: one penalty to three, answers and loops of every direction, greedy
    looping for all, some or none of its ids, its cost quiet, noisy or the penalty not slower."""
    penalties = draw(st.integers(min_value=1, max_value=3))
    distinct = tuple(draw(COUNTS) for _ in range(penalties))
    looping = tuple(draw(st.sampled_from([0, 0, 2, 5, 8])) for _ in range(penalties))
    greedy_loop = tuple(draw(st.sampled_from([0, 4, 8, 20, 64])) for _ in range(penalties))
    with_runs, without_runs = draw(two_sides())
    repetition = repetition_timed(
        with_runs, without_runs, distinct=distinct, looping=looping, greedy_loop=greedy_loop
    )
    return every_record(repetition=repetition)


@PROPERTY
@given(repetition_records())
def test_repetition_writes_only_claims_its_record_supports(records):
    check(records)


# --- batch --------------------------------------------------------------------------------------


@st.composite
def batch_of(draw) -> Batch:
    """batch.json: every row as alone or one that parted; its time quiet, noisy, slower."""
    sequential, batch = draw(two_sides())
    record = batch_timed(batch, sequential)
    if draw(st.booleans()):
        data = to_json(record)
        data["rows"][3] |= {"same_ids": False, "first_divergence": 3, "max_logit_diff": 5.0}
        record = from_json(Batch, data)
    return record


@PROPERTY
@given(batch_of())
def test_batch_writes_only_claims_its_record_supports(batch):
    check(every_record(batch=batch))


# --- conversation ---------------------------------------------------------------------------------


@st.composite
def turn_runs(draw) -> dict[int, tuple[list[float], list[float]]]:
    """The timed turns' runs (turns 2, 3, 4): each turn's time to first token free to fall or
    rise with its prompt, carry faster or not, quiet or spread."""
    timed = {}
    for turn in (2, 3, 4):
        recompute, carry = draw(two_sides())
        timed[turn] = (recompute, carry)
    return timed


@PROPERTY
@given(turn_runs())
def test_the_conversation_writes_only_claims_its_turns_support(timed):
    check(every_record(conversation=conversation_timed(timed)))


# --- a planted wrong branch ------------------------------------------------------------------


def check_batch(batch: Batch) -> None:
    check(every_record(batch=batch))


def test_the_property_test_catches_cheaper_judged_from_the_medians(monkeypatch):
    honest = batch_records.batch_claims

    def planted(batch):
        claims = honest(batch)
        timing = batch.timing
        every_same = all(row.same_ids for row in batch.rows)
        claims["cheaper"] = claim(
            "batch.cheaper",
            every_same and timing.batch_s < timing.sequential_s,
            slowest_batch_s=max(timing.batch_runs_s),
            fastest_sequential_s=min(timing.sequential_runs_s),
        )
        return claims

    monkeypatch.setattr(batch_records, "batch_claims", planted)
    with pytest.raises(AssertionError):
        FIND(given(batch_of())(check_batch))()
