"""A sentence written once (mminfer.records.sentences): its table, ``say`` and the tally."""

from __future__ import annotations

import importlib

import jinja2
import pytest
from reportcases import cases, serve_banded, sweep_banded
from reportdata import (
    REMEDY_SHARES,
    differing,
    every_record,
    kv_record,
    remedies_record,
    sampler_record,
)

import mminfer.report.render as render
import mminfer.report.sections.latency.latency as latency_section
from mminfer.measurements import MEASUREMENTS, REPORTS, declared
from mminfer.records.claims import ClaimLog
from mminfer.records.sentences import Sentence
from mminfer.report.render import environment, render_reports, sentence_table

BYTES_EQUAL = Sentence(
    "kvbytes.equal",
    holds=lambda kvbytes: kvbytes.measured_bytes == kvbytes.formula_bytes,
    words="헤드 {{ kvbytes.kv_heads }}개",
)


def say_with(monkeypatch, records, *sentences):
    """The environment's ``say`` on ``records``, its table ``sentences``, tallying into a log."""
    monkeypatch.setattr(render, "sentence_table", lambda: {s.key: s for s in sentences})
    env = environment()
    log = ClaimLog()
    monkeypatch.setattr(env.globals["say"].tally, "log", log)
    monkeypatch.setattr(env.globals["say"], "records", records)
    return env.globals["say"], log


def test_a_sentence_key_names_its_section():
    with pytest.raises(ValueError, match="section"):
        Sentence("equal", holds=lambda kvbytes: True, words="같다")


def test_a_sentence_whose_predicate_holds_is_written_with_its_record_s_figures(monkeypatch):
    say, log = say_with(monkeypatch, {"kvbytes": kv_record()}, BYTES_EQUAL)
    assert say("kvbytes.equal") == "헤드 2개"
    assert [claim.key for claim in log.rendered] == ["kvbytes.equal"]


def test_a_sentence_whose_predicate_is_false_writes_nothing_and_is_tallied(monkeypatch):
    say, log = say_with(monkeypatch, {"kvbytes": kv_record(measured_bytes=1)}, BYTES_EQUAL)
    assert say("kvbytes.equal") == ""
    assert log.summary() == "claims: 0 rendered, 1 suppressed (kvbytes.equal)"


def test_a_sentence_writes_the_words_of_the_variant_that_holds(monkeypatch):
    sentence = Sentence(
        "kvbytes.bytes",
        holds=lambda kvbytes: "equal" if kvbytes.matches else None,
        words={"equal": "같다"},
    )
    say, log = say_with(monkeypatch, {"kvbytes": kv_record()}, sentence)
    assert say("kvbytes.bytes") == "같다"
    assert dict(log.rendered[0].about) == {"variant": "equal"}
    say.records = {"kvbytes": kv_record(matches=False)}
    assert say("kvbytes.bytes") == ""
    assert [claim.key for claim in log.suppressed] == ["kvbytes.bytes"]


def test_a_variant_without_words_is_an_error():
    sentence = Sentence("kvbytes.bytes", holds=lambda kvbytes: "close", words={"equal": "같다"})
    with pytest.raises(ValueError, match="close"):
        sentence.choose({"kvbytes": kv_record()})


def test_the_converted_sections_sentences_are_in_the_table():
    assert sorted(sentence_table()) == [
        "anatomy.arithmetic_share_with_cache",
        "anatomy.arithmetic_share_without_cache",
        "anatomy.binds_with_cache",
        "anatomy.binds_without_cache",
        "anatomy.dispatch_share_with_cache",
        "anatomy.dispatch_share_without_cache",
        "anatomy.fewer_flops_same_calls",
        "anatomy.fit_with_cache",
        "anatomy.fit_without_cache",
        "anatomy.fixed_beside_sweep",
        "anatomy.formula_equals_counter",
        "anatomy.glance",
        "anatomy.memory_share_with_cache",
        "anatomy.memory_share_without_cache",
        "anatomy.probes",
        "anatomy.probes_busy",
        "anatomy.profile_with_cache",
        "anatomy.profile_without_cache",
        "batch.cheaper",
        "batch.every_row_same",
        "batch.faster",
        "capacity.bound",
        "capacity.formula",
        "conversation.answers",
        "conversation.carry_faster",
        "conversation.formulas",
        "conversation.logits",
        "conversation.no_breaks",
        "conversation.prefix_copied",
        "conversation.reused",
        "conversation.same_context",
        "conversation.shared_bytes",
        "conversation.ttft_falls_as_prompt_grows",
        "conversation.ttft_saved_grows",
        "count.differs_from_formula",
        "kvbytes.bytes",
        "latency.cached_limits",
        "latency.cost",
        "latency.lesson",
        "latency.prefill_most",
        "latency.speed",
        "latency.sweep_crosses",
        "latency.tpot_agrees",
        "latency.ttft_paths",
        "latency.uncached_gap",
        "latency.uncached_limits",
        "remedies.all",
        "remedies.compile",
        "remedies.differ",
        "remedies.gqa_without_repeat_kv",
        "remedies.in_place_cache",
        "remedies.keep",
        "remedies.loop",
        "remedies.within_parts",
        "repetition.changes_answers",
        "repetition.distinct_trend",
        "repetition.glance_cost",
        "repetition.greedy_repeats_trend",
        "repetition.off_matches_temp",
        "repetition.samples_never_loop",
        "repetition.share",
        "run.course_folder",
        "same.ids",
        "same.paths",
        "sampler.cache",
        "serve.bound",
        "serve.cliff_cache",
        "serve.cliffs",
        "serve.context_beyond_measured",
        "serve.decode_spread_over",
        "serve.dips",
        "serve.experts",
        "serve.fit_within",
        "serve.growth",
        "serve.larger_faster",
        "serve.load_against_sweep",
        "serve.nearly_free",
        "serve.peak_at",
        "serve.per_user_falls",
        "serve.prefill_against_sweep",
        "serve.prefill_spread_over",
        "serve.speed_bound",
        "serve.two_bands",
        "serve.within_spread_over",
        "sweep.against_time",
        "sweep.fixed_share",
        "sweep.load_against_latency",
        "sweep.load_against_time",
        "sweep.longest_estimate",
        "sweep.prefill",
        "sweep.prefill_against_latency",
        "sweep.runs_spread_over",
        "sweep.spreads_within",
        "sweep.steps_spread_over",
        "sweep.time_below_tokens",
        "sweep.two_bands",
        "sweep.uncached_steps_grew",
        "temp.distinct_grows",
        "temp.lesson",
        "temp.trend",
        "time.busy",
        "time.cache_faster",
        "time.extra_rounds",
        "time.fixed_cost",
        "time.reason",
        "time.spread",
        "topk.cap",
        "topk.counts",
        "topk.lesson",
        "topk.mass",
        "topk.survivors",
        "topp.lesson",
        "topp.positions",
    ]


def rendered(words: str, shapes: list[dict]) -> str:
    """The words on the first of ``shapes`` whose records they can read (a variant may need its
    own record's shape: sampler's first difference)."""
    for records in shapes[:-1]:
        try:
            return environment().from_string(words).render(records)
        except jinja2.UndefinedError:
            continue
    return environment().from_string(words).render(shapes[-1])


def test_the_table_holds_every_section_module_s_sentences_and_no_record_holds_any():
    for module in render.section_modules():
        sentences = getattr(importlib.import_module(module), "SENTENCES", ())
        assert [sentence_table()[s.key] for s in sentences] == list(sentences), module
    for entry in MEASUREMENTS:  # a record's module decides; its section's says
        assert not hasattr(importlib.import_module(declared(entry.record)[0]), "SENTENCES")


def test_every_variant_s_words_render_on_the_records():
    busy = {"busy": render.busy_of(cases()["machine_busy"]["records"]["time"])}  # its figures
    every = every_record()  # the figures the renderer and latency.md.j2 pass
    busy |= {
        "retime": render.retime_command(busy["busy"], "report.md"),
        "crossing": latency_section.crossing_of(every["latency"], every["sweep"]),
        "folders": ["/data/minimind"],  # run.course_folder's: the folders the run read
        "cliff": cases()["course"]["records"]["serve"].cliffs[0],  # a cache cliff's row
    }
    parted = {"same": differing(margin=1e-6, diff=2e-6)} | busy  # a step to name
    banded = {"sweep": sweep_banded(True), "serve": serve_banded(True)}  # two bands to name
    shapes = [
        every_record(remedies=remedies_record(REMEDY_SHARES | {"compile": 0.6})) | parted,
        cases()["moe"]["records"] | parted | banded,  # a MoE model's experts
        every_record(sampler=sampler_record(identical=27)) | parted,
    ]
    for sentence in sentence_table().values():
        variants = [sentence.words] if isinstance(sentence.words, str) else sentence.words.values()
        for words in variants:
            assert rendered(words, shapes).strip()


def test_the_reports_ask_each_converted_sentence_once():
    """Each sentence is asked by one report, once; the busy line (time.busy) opens each report,
    naming that report's own busy records, so it is asked once in each."""
    asked = {}
    for report in REPORTS:
        log = ClaimLog()
        render_reports(every_record(), claims=log, reports=(report,))
        asked[report] = [claim.key for claim in log.asked]
    assert [key for keys in asked.values() for key in keys if keys.count(key) > 1] == []
    both = [key for keys in asked.values() for key in keys]
    # asked only where their case is: a course model set's folders, a table row's cache cliff
    sometimes = {"run.course_folder": 0, "serve.cliff_cache": 0}
    # a load named inside a comparison that parted, where one side alone ran busy
    sometimes |= dict.fromkeys(
        ("sweep.load_against_time", "sweep.load_against_latency", "serve.load_against_sweep"), 0
    )
    expected = dict.fromkeys(sentence_table(), 1) | {"time.busy": len(REPORTS)} | sometimes
    assert {key: both.count(key) for key in sentence_table()} == expected


# The comparison sentences the quiet golden (every_record: 7 quiet rounds, quiet probes) writes,
# with the variant it writes: where the rounds decide, nothing is lost to caution (issue 47).
QUIET_KEYS = [
    # anatomy
    ("anatomy.binds_with_cache", "dispatch"),
    ("anatomy.binds_without_cache", "arithmetic"),
    ("anatomy.fit_with_cache", "adds_up"),
    ("anatomy.fit_without_cache", "adds_up"),
    ("anatomy.arithmetic_share_with_cache", "share"),
    ("anatomy.memory_share_with_cache", "share"),
    ("anatomy.dispatch_share_without_cache", "share"),
    ("anatomy.arithmetic_share_without_cache", "share"),
    ("anatomy.memory_share_without_cache", "share"),
    ("anatomy.glance", "dispatch/arithmetic"),
    # remedies
    ("remedies.loop", "same"),
    ("remedies.in_place_cache", "saves"),
    ("remedies.gqa_without_repeat_kv", "saves"),
    ("remedies.all", "saves"),
    ("remedies.keep", "saves"),
    # time (## KV 캐시)
    ("time.cache_faster", "faster"),
    ("time.reason", "short"),
    ("latency.cached_limits", "within"),
    ("latency.uncached_limits", "within"),
    ("latency.lesson", "both_within"),
    ("latency.speed", "below"),
    ("latency.ttft_paths", "same"),
    ("latency.tpot_agrees", "agrees"),
    ("latency.uncached_gap", "grows"),
    # the profile (issue 48)
    ("anatomy.profile_with_cache", None),
    ("anatomy.profile_without_cache", None),
    # serve's growth under Holm (every: one claim on all steps), conversation's counts (h-spread)
    ("serve.growth", "every"),
    ("conversation.answers", "same_fewer"),
    # time's reason line from its own narrow side, latency beside the sweep (issues 46, 47)
    ("time.fixed_cost", "below"),
    ("latency.sweep_crosses", "never"),
]


def test_the_quiet_golden_still_writes_the_comparisons_its_rounds_decide():
    log = ClaimLog()
    render_reports(every_record(), claims=log)  # the beyond sections' sentences are beyond.md's
    written = {(claim.key, claim.about.get("variant")) for claim in log.rendered}
    assert [key for key in QUIET_KEYS if key not in written] == []
