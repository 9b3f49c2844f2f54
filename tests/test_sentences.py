"""A sentence written once (mminfer.records.sentences): its table, ``say`` and the tally."""

from __future__ import annotations

import importlib
import re

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
from mminfer.measurements import REPORTS
from mminfer.records.sentences import Sentence
from mminfer.report.decided import DecisionLog
from mminfer.report.render import environment, render_reports, rendering_context, sentence_table

BYTES_EQUAL = Sentence(
    "kvbytes.equal",
    holds=lambda kvbytes: kvbytes.measured_bytes == kvbytes.formula_bytes,
    words="헤드 {{ kvbytes.kv_heads }}개",
)


def say_with(monkeypatch, records, *sentences):
    """The environment's ``say`` on ``records``, its table ``sentences``, tallying into a log."""
    monkeypatch.setattr(render, "sentence_table", lambda: {s.key: s for s in sentences})
    log = DecisionLog()
    return rendering_context(environment(), records, decisions=log)["say"], log


def test_a_sentence_key_names_its_section():
    with pytest.raises(ValueError, match="section"):
        Sentence("equal", holds=lambda kvbytes: True, words="같다")


def test_a_sentence_whose_predicate_holds_is_written_with_its_record_s_figures(monkeypatch):
    say, log = say_with(monkeypatch, {"kvbytes": kv_record()}, BYTES_EQUAL)
    assert say("kvbytes.equal") == "헤드 2개"
    assert [claim.key for claim in log.written] == ["kvbytes.equal"]


def test_a_sentence_whose_predicate_is_false_writes_nothing_and_is_tallied(monkeypatch):
    say, log = say_with(monkeypatch, {"kvbytes": kv_record(measured_bytes=1)}, BYTES_EQUAL)
    assert say("kvbytes.equal") == ""
    assert log.summary() == "decisions: 0 written, 1 without words (kvbytes.equal)"


def test_a_sentence_writes_the_words_of_the_variant_that_holds(monkeypatch):
    sentence = Sentence(
        "kvbytes.bytes",
        holds=lambda kvbytes: "equal" if kvbytes.matches else None,
        words={"equal": "같다"},
    )
    say, log = say_with(monkeypatch, {"kvbytes": kv_record()}, sentence)
    assert say("kvbytes.bytes") == "같다"
    assert log.written[0].cited == {"variant": "equal"}
    say.records = {"kvbytes": kv_record(matches=False)}
    assert say("kvbytes.bytes") == ""
    assert [claim.key for claim in log.unwritten] == ["kvbytes.bytes"]


def test_a_variant_without_words_is_an_error():
    sentence = Sentence("kvbytes.bytes", holds=lambda kvbytes: "close", words={"equal": "같다"})
    with pytest.raises(ValueError, match="close"):
        sentence.choose({"kvbytes": kv_record()})


def test_every_sentence_is_asked_for_and_every_ask_is_a_sentence():
    """The keys the templates and the sentences' words ask for (``say("...")``) are exactly the
    table's: none missing, none dead (the busy line's is asked by the renderer)."""
    texts = [path.read_text(encoding="utf-8") for path in render.SECTIONS.glob("*/*.md.j2")]
    texts += [path.read_text(encoding="utf-8") for path in render.TEMPLATE.parent.glob("*.j2")]
    for sentence in sentence_table().values():
        words = [sentence.words] if isinstance(sentence.words, str) else sentence.words.values()
        texts += list(words)
    asked = {key for text in texts for key in re.findall(r"say\(['\"]([\w.]+)['\"]", text)}
    built = tuple(key for key in asked if key.endswith("."))  # say("remedies." ~ name)
    assert asked - set(built) <= set(sentence_table())
    unasked = [key for key in sentence_table() if key not in asked and not key.startswith(built)]
    assert unasked == ["time.busy"]


def rendered(words: str, shapes: list[dict]) -> str:
    """The words on the first of ``shapes`` whose records they can read (a variant may need its
    own record's shape: sampler's first difference)."""
    env = environment()
    for records in shapes[:-1]:
        try:
            return env.from_string(words).render(records | rendering_context(env, records))
        except jinja2.UndefinedError:
            continue
    return env.from_string(words).render(shapes[-1] | rendering_context(env, shapes[-1]))


def test_the_table_holds_every_section_module_s_sentences():
    for module in render.section_modules():
        sentences = getattr(importlib.import_module(module), "SENTENCES", ())
        assert [sentence_table()[s.key] for s in sentences] == list(sentences), module


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
        log = DecisionLog()
        render_reports(every_record(), decisions=log, reports=(report,))
        asked[report] = [d.key for d in log.asked if d.key in sentence_table()]
    assert [key for keys in asked.values() for key in keys if keys.count(key) > 1] == []
    both = [key for keys in asked.values() for key in keys]
    # asked only where their case is: a course model set's folders, a table row's cache cliff
    sometimes = {"cache.course_folder": 0, "serve.cliff_cache": 0}
    # a load named inside a comparison that parted, where one side alone ran busy
    sometimes |= dict.fromkeys(
        ("sweep.load_against_time", "sweep.load_against_latency", "serve.load_against_sweep"), 0
    )
    sometimes = {key: 0 for key in sometimes if key in sentence_table()}
    expected = dict.fromkeys(sentence_table(), 1) | {"time.busy": len(REPORTS)} | sometimes
    assert {key: both.count(key) for key in sentence_table()} == expected


# The comparison sentences the quiet golden (every_record: 7 quiet rounds, quiet probes) writes,
# with the variant it writes: where the rounds decide, nothing is lost to caution (issue 47).
QUIET_KEYS = [
    # anatomy
    ("anatomy.binds", "dispatch", {"path": "with_cache"}),
    ("anatomy.binds", "arithmetic", {"path": "without_cache"}),
    ("anatomy.fits", "adds_up", {"path": "with_cache"}),
    ("anatomy.fits", "adds_up", {"path": "without_cache"}),
    ("anatomy.share", "share", {"path": "with_cache", "term": "arithmetic"}),
    ("anatomy.share", "share", {"path": "with_cache", "term": "memory"}),
    ("anatomy.share", "share", {"path": "without_cache", "term": "dispatch"}),
    ("anatomy.share", "share", {"path": "without_cache", "term": "arithmetic"}),
    ("anatomy.share", "share", {"path": "without_cache", "term": "memory"}),
    ("anatomy.glance_binding", "dispatch/arithmetic"),
    # remedies
    ("remedies.saving", "same"),
    ("remedies.saving", "above"),
    ("remedies.saving", "above"),
    ("remedies.saving", "above"),
    ("remedies.keep_of", "above"),
    # time (## KV 캐시)
    ("time.cache_faster", "yes"),
    ("time.reason", "short"),
    ("time.cached_limits", "within"),
    ("time.uncached_limits", "within"),
    ("time.lesson", "both_within"),
    ("time.speed", "below"),
    ("time.ttft_paths", "same"),
    ("time.tpot_agrees", "agrees"),
    ("time.uncached_gap", "grows"),
    # the profile (issue 48)
    ("anatomy.path_profiled", True, {"path": "with_cache"}),
    ("anatomy.path_profiled", True, {"path": "without_cache"}),
    # serve's growth under Holm (every: one claim on all steps), conversation's counts (h-spread)
    ("serve.growth_of", "every"),
    ("conversation.answers_of", "same_fewer"),
    # time's reason line from its own narrow side, latency beside the sweep (issues 46, 47)
    ("time.fixed_cost_said", "at_least"),
    ("time.sweep_crossing", "never"),
]


def test_the_quiet_golden_still_writes_the_comparisons_its_rounds_decide():
    log = DecisionLog()
    render_reports(every_record(), decisions=log)  # the beyond sections' sentences are beyond.md's
    written = [(claim.key, claim.value, dict(claim.about)) for claim in log.written]

    def found(key, value, about=None):  # a decision asked with these figures, among others
        return any(
            (k, v) == (key, value) and (about or {}).items() <= given.items()
            for k, v, given in written
        )

    assert [entry for entry in QUIET_KEYS if not found(*entry)] == []
