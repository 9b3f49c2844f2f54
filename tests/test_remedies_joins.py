"""remedies.within_parts (mminfer.report.joins): each remedy's saving against anatomy.json's
profiled category; nothing without a profile; the check follows the raw rounds under noise."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from reportdata import NOISES, anatomy_record, remedies_record, replayed, spread_runs

from mminfer.measures.remedies.measure import REMEDY_SIDES, remedy_of
from mminfer.report.joins import REMEDIES_SENTENCES, remedies_against_parts

SENTENCE = REMEDIES_SENTENCES[0]


def profiled(cache_cat: float, repeat_kv: float, new_tokens: int = 64):
    """anatomy.json with a cached path's profile (h-profile's shape: profile.with_cache.parts_s)."""
    parts = {"cache_cat": cache_cat, "repeat_kv": repeat_kv, "rest": 0.1}
    return SimpleNamespace(new_tokens=new_tokens, profile={"with_cache": {"parts_s": parts}})


def test_nothing_is_said_without_a_profile_or_at_another_length():
    remedies = remedies_record()
    assert remedies_against_parts(remedies, None) is None
    assert remedies_against_parts(remedies, anatomy_record()) is None  # no profile yet
    assert remedies_against_parts(remedies, profiled(1.0, 1.0, new_tokens=32)) is None


def test_a_saving_above_its_profiled_part_is_named():
    remedies = remedies_record()  # the in-place cache saves 10 % of 0.4 s, the GQA 15 %
    assert remedies_against_parts(remedies, profiled(1.0, 1.0)) == "within"
    assert remedies_against_parts(remedies, profiled(0.001, 1.0)) == "beyond"
    assert remedies_against_parts(remedies, profiled(1.0, 0.001)) == "beyond"


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
    chosen = remedies_against_parts(**records)
    assert chosen in ("within", "beyond")
    assert SENTENCE.supported(records, chosen)


def test_a_part_between_the_savings_low_end_and_its_median_is_within():
    remedies = remedies_record()
    saved = remedies.remedies["in_place_cache"].saved_per_step_interval
    part = 64 * (saved.low + saved.median) / 2
    assert saved.low < saved.median
    records = {"remedies": remedies, "anatomy": profiled(part, 1.0)}
    assert remedies_against_parts(**records) == "within"
    assert SENTENCE.supported(records, "within") and not SENTENCE.supported(records, "beyond")
