"""The sampling side's sentences held to their judges, on records of every shape a run can give.

temp, topp, sampler and topk of every shape; repetition, batch and the conversation timed on noisy
runs (bimodal, drifting, one outlier, steady contention, or quiet; 3 to 9 rounds): no claim the
reports wrote is denied by its oracle (tests/oracles.py) nor unsupported by its check.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from oracles import denied, plant
from reportcases import cases
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

from mminfer.measures.batch.batch import Batch
from mminfer.measures.topp.topp import TopPDetail
from mminfer.records import from_json, to_json
from mminfer.report.decided import DecisionLog
from mminfer.report.render import render_reports

PROPERTY = settings(
    max_examples=30,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
FIND = settings(PROPERTY, phases=[Phase.generate])  # a planted error: found, not shrunk

COUNTS = st.integers(min_value=1, max_value=30)


def check(records: dict) -> None:
    log = DecisionLog()
    render_reports(records, decisions=log)  # report.md and beyond.md, each from its own records
    assert denied(records, log) == []


NOISE = ("quiet", "bimodal", "drifting", "outlier", "contention")


@st.composite
def two_sides(draw) -> tuple[list[float], list[float]]:
    """(the slower side's runs, the faster side's), 3 to 9 rounds of both: apart, close, the
    same or swapped, under one kind of noise: bimodal runs (some 8 times the rest), a drift up
    through the rounds, one outlier, steady contention (every run slower and spread), or quiet."""
    rounds = draw(st.integers(min_value=3, max_value=9))
    slow = draw(st.floats(min_value=0.01, max_value=1.0))
    ratio = draw(st.sampled_from([0.25, 0.5, 0.87, 0.95, 0.98, 1.0, 1.1]))
    noise = draw(st.sampled_from(NOISE))
    outlier = draw(st.integers(min_value=0, max_value=2 * rounds - 1))
    jitter = 0.25 if noise == "contention" else 0.03

    def run(index: int, base: float) -> float:
        factor = draw(st.floats(min_value=1 - jitter, max_value=1 + jitter))
        if noise == "bimodal":
            factor *= draw(st.sampled_from([1.0, 8.0]))
        elif noise == "drifting":
            factor *= 1 + 0.15 * index
        elif noise == "outlier" and index == outlier:
            factor *= 20.0
        elif noise == "contention":
            factor *= 2.5
        return base * factor

    slower = [run(2 * i, slow) for i in range(rounds)]
    faster = [run(2 * i + 1, slow * ratio) for i in range(rounds)]
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


# --- a planted bad predicate, and the quiet golden ---------------------------------------------


def share_from_the_medians(repetition) -> str | None:
    """The rule before issue 47: the penalty's share said wherever its median run was slower."""
    timing = repetition.timing
    return "share" if timing.with_penalty_s > timing.without_penalty_s else "not_slower"


def test_the_property_test_catches_a_share_judged_from_the_medians(monkeypatch):
    plant(monkeypatch, "repetition.cost_of", share_from_the_medians)
    with pytest.raises(AssertionError):
        FIND(given(repetition_records())(check))()


QUIET_KEYS = {  # rendered on the quiet golden before issue 47: still rendered
    "batch": ("cheaper", "every_row_same", "faster"),
    "conversation": (  # exact, renamed: one sentence of variants for each negating pair
        "answers_of",
        "formulas_of",
        "logits_of",
        "no_breaks",
        "prefix_copied_of",
        "reused_of",
        "shared_bytes_of",
        "saved_grows",
    ),
    "repetition": (
        "changed_from_off",
        "distinct_trend",
        "greedy_repeats_trend",
        "off_against_temp",
    ),
    "topk": ("cap_reached", "counts_against_temp", "mass_against_topp", "survivors_against_topp"),
    # sweep and serve (issue 47)
    "sweep": ("spreads_within",),
    "serve": ("fit_within",),
}
QUIET_VARIANTS = {  # the timed sentences' variants a quiet run's 7 rounds decide
    "repetition.cost_of": "share",
    "batch.faster": "faster",
    "conversation.carry_faster": "every",
    "conversation.saved_grows": "grows",
    # sweep and serve (issue 47): 5 runs and 5 passes decide at 90 %
    "sweep.time_against_tokens": "below",
    "sweep.fixed_share_of": "share",
    "sweep.prefill_twice": "same",
    "sweep.uncached_growth": "grew",
    "serve.peak_of": "at",
    "serve.per_user_of": "falls",
    "serve.bound_of": "speed",
    "serve.speed_bound_of": "fit",
    "serve.growth_of": "every",
    "serve.nearly_free_of": "up_to",
}


def written(name: str) -> dict[str, set]:
    """The decisions both reports of the golden case ``name`` wrote, by key: the values each
    was asked with (the beyond sections' are beyond.md's)."""
    case = cases()[name]
    log = DecisionLog()
    render_reports(case["records"], case["pictures"], case["cache_script"], decisions=log)
    found = {}
    for decision in log.written:
        found.setdefault(decision.key, set()).add(decision.value)
    return found


def test_a_quiet_run_still_says_what_its_rounds_decide():
    keys = {f"{section}.{name}" for section, names in QUIET_KEYS.items() for name in names}
    decided = written("full")
    assert keys | set(QUIET_VARIANTS) <= set(decided)
    for key, variant in QUIET_VARIANTS.items():
        assert decided[key] == {variant}, key
