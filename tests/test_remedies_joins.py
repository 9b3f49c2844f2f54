"""remedies.json's comparison sentences under noisy rounds: each remedy's saving, logits_to_keep's,
compile's cost (mminfer.measures.remedies.remedies), the section's joins with anatomy.json
(remedies.against_parts, remedies.against_floor); each check follows the raw rounds."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import pytest
from oracles import ORACLES
from oracles_remedies import pays_back_in_runs
from reportcases import cases
from reportdata import (
    NOISES,
    QUIET_ROUNDS,
    QUIET_SHUFFLED,
    REMEDY_SHARES,
    anatomy_record,
    remedies_record,
    replayed,
    spread_runs,
)

from mminfer.measures.remedies import decide
from mminfer.measures.remedies.decide import own_saves_of, pays_back, saves_of
from mminfer.measures.remedies.measure import REMEDY_SIDES, keep_of, remedy_of
from mminfer.measures.remedies.remedies import CONTROL, Remedies
from mminfer.report.decided import Decision
from mminfer.report.sections.remedies.joins import against_floor, against_parts


def parts_hold(records, variant: str) -> bool:
    """remedies.against_parts's oracle on ``records`` for ``variant``."""
    return ORACLES["remedies.against_parts"](records, {"variant": variant})


def record_decisions(remedies: Remedies):
    """remedies.json's own decisions, each asked as remedies.md.j2 asks it."""
    yield Decision("remedies.most", decide.most(remedies))
    yield Decision("remedies.pays_back", decide.pays_back(remedies))
    yield Decision("remedies.differs", decide.differs(remedies))
    yield Decision("remedies.keep_of", decide.keep_of(remedies))
    for name in remedies.remedies:
        given = {"name": name}
        yield Decision("remedies.saving", decide.saving(remedies, **given), given)
        if name != CONTROL:
            yield Decision("remedies.own_saving", decide.own_saving(remedies, **given), given)


def profiled(kv_cat: float, repeat_kv: float, new_tokens: int = 64):
    """anatomy.json with a cached path's profile: only its parts_s are read."""
    parts = {"kv_cat": kv_cat, "repeat_kv": repeat_kv, "rest": 0.1}
    with_cache = SimpleNamespace(parts_s=parts)
    return SimpleNamespace(new_tokens=new_tokens, profile={"with_cache": with_cache})


def test_nothing_is_said_without_a_profile_or_at_another_length():
    remedies = remedies_record()
    assert against_parts(remedies, None) is None
    unprofiled = dataclasses.replace(anatomy_record(), profile=None)
    assert against_parts(remedies, unprofiled) is None  # no profile
    assert against_parts(remedies, profiled(1.0, 1.0, new_tokens=32)) is None


def test_a_saving_above_its_profiled_part_is_named():
    remedies = remedies_record()  # the in-place cache saves 10 % of 0.4 s, the GQA 15 %
    assert against_parts(remedies, profiled(1.0, 1.0)) == "within"
    assert against_parts(remedies, profiled(0.001, 1.0)) == "beyond"
    assert against_parts(remedies, profiled(1.0, 0.001)) == "beyond"


@pytest.mark.parametrize("noise", NOISES)
@pytest.mark.parametrize("part", [0.0, 0.02, 0.04, 0.06, 0.1])
def test_the_words_chosen_are_the_ones_the_raw_rounds_support(noise, part):
    remedies = remedies_record()
    for name, seconds in (("in_place_cache", 0.36), ("gqa_without_repeat_kv", 0.34)):
        remedy = [run[0] for run in spread_runs([seconds], 0.05, 7, noise=noise)]
        minimind = [run[0] for run in spread_runs([0.4], 0.05, 7, reverse=True, noise=noise)]
        timed = replayed(remedy, minimind, REMEDY_SIDES, runs=3)
        remedies.remedies[name] = remedy_of(name, timed, steps=64, without_cache_s=2.0)
    records = {"remedies": remedies, "anatomy": profiled(part, part)}
    chosen = against_parts(**records)
    assert chosen in ("within", "beyond")
    assert parts_hold(records, chosen)


def test_a_part_between_the_savings_low_end_and_its_median_is_within():
    remedies = remedies_record()
    saved = remedies.remedies["in_place_cache"].saved_per_step_interval
    part = 64 * (saved.low + saved.median) / 2
    assert saved.low < saved.median
    records = {"remedies": remedies, "anatomy": profiled(part, 1.0)}
    assert against_parts(**records) == "within"
    assert parts_hold(records, "within") and not parts_hold(records, "beyond")


def noisy_remedies(noise: str, share: float, kept: float) -> Remedies:
    """remedies_record with the in-place cache, the GQA attention and logits_to_keep timed from
    runs under ``noise`` (spread_runs), the remedy at ``share`` of MiniMind's 0.4 s."""
    remedies = remedies_record()

    def runs(seconds: float, reverse: bool = False) -> list[float]:
        return [run[0] for run in spread_runs([seconds], 0.05, 7, reverse=reverse, noise=noise)]

    for name in ("in_place_cache", "gqa_without_repeat_kv"):
        timed = replayed(runs(0.4 * share), runs(0.4, reverse=True), REMEDY_SIDES, runs=3)
        remedies.remedies[name] = remedy_of(name, timed, steps=64, without_cache_s=2.0)
    timed = replayed(runs(2.0 * kept), runs(2.0, reverse=True), REMEDY_SIDES, runs=3)
    remedies.logits_to_keep = keep_of(timed, same_ids=True, cached_s=0.4)
    return remedies


@pytest.mark.parametrize("noise", NOISES)
@pytest.mark.parametrize("share", [0.5, 0.9, 0.97, 1.0, 1.1])
def test_the_remedies_sentences_say_only_what_their_rounds_decide(noise, share):
    remedies = noisy_remedies(noise, share, kept=share)
    said = 0
    for decision in record_decisions(remedies):
        if decision.written:
            said += 1
            oracle = ORACLES[decision.key]
            assert oracle({"remedies": remedies}, decision.cited), (decision.key, decision.value)
    assert said >= 3


def test_a_saving_written_where_the_rounds_do_not_decide_one_is_caught():
    remedies = noisy_remedies("bimodal", 0.97, kept=0.97)
    remedy = remedies.remedies["in_place_cache"]
    assert remedy.saves != "above"
    remedy.saves = "above"  # the medians' word, not the interval's
    oracle = ORACLES["remedies.saving"]  # the rounds' decision against the stored one
    chosen = decide.saving(remedies, "in_place_cache")
    assert not oracle({"remedies": remedies}, {"variant": chosen, "name": "in_place_cache"})


def test_a_remedy_that_adds_nothing_to_the_control_s_saving_saves_nothing_of_its_own():
    # issue 60: the control loop alone saves 10 %; the remedy runs as fast as the control
    minimind = [0.4 * r for r in QUIET_SHUFFLED]
    control = [0.36 * r for r in QUIET_SHUFFLED[::-1]]
    remedy_runs = [0.36 * r for r in QUIET_ROUNDS]
    timed = replayed(remedy_runs, minimind, REMEDY_SIDES, runs=3)
    own = replayed(remedy_runs, control, REMEDY_SIDES, runs=3)
    remedy = remedy_of("all", timed, steps=64, without_cache_s=2.0, control=own)
    assert saves_of(remedy) == "above"  # against MiniMind: the control's saving, counted again
    interval = remedy.own_saved_per_step_interval
    assert interval.low <= 0 <= interval.high and own_saves_of(remedy) != "above"


def test_compile_pays_back_its_cost_over_its_saving_and_the_floor_needs_a_reliable_probe():
    remedies = remedies_record()  # compile's first generation 30 s more; 2.77 ms a step saved
    cost, saved = remedies.compile_cost, remedies.remedies["compile"].saved_per_step_interval
    low, high = cost.break_even_interval.low, cost.break_even_interval.high  # the saving's ends:
    assert low <= 30 / saved.high and 30 / saved.low <= high and low <= 30 / saved.median <= high
    flat = remedies_record(REMEDY_SHARES | {"compile": 1.0})  # compiled, as slow as MiniMind
    assert pays_back(flat) == "unknown" and pays_back_in_runs(flat, "unknown")
    records = {"remedies": remedies, "anatomy": anatomy_record()}  # 3.4 ms a step, 0.87 the floor
    floor_holds = ORACLES["remedies.against_floor"]
    assert against_floor(**records) == "above" and floor_holds(records, {"variant": "above"})
    # nothing from a bandwidth probe whose runs fall into two groups
    assert against_floor(remedies, cases()["anatomy_bimodal_busy"]["records"]["anatomy"]) is None


def test_a_remedy_timed_in_more_rounds_than_its_control_is_judged_on_the_rounds_both_ran():
    minimind, remedy_runs = [0.4 * r for r in QUIET_SHUFFLED], [0.3 * r for r in QUIET_ROUNDS]
    timed = replayed(remedy_runs, minimind, REMEDY_SIDES, runs=3)  # its last two: no control
    control = replayed(remedy_runs[:5], [0.36 * r for r in QUIET_SHUFFLED[:5]], REMEDY_SIDES, 3)
    remedy = remedy_of("all", timed, steps=64, without_cache_s=2.0, control=control)
    assert len(remedy.own_runs_s) == 5 and own_saves_of(remedy) == remedy.own_saves  # no error
