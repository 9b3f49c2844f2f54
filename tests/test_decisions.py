"""The templates' decisions: each a decide.py function, each variant its words branch on
rendered, and the ones whose words state a direction or what ran judged by an oracle.

A section template words a decision as a macro per decision, a branch per variant, called with
the value its measure's decide.py gives: ``{{ ids(decide.cache.ids_compared(records.same)) }}``
(mminfer.report.render). These tests read the templates themselves (the macros, their branches
and the decisions they are called with), so a new section is held to the same rules unasked.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest
from oracles import ORACLES, honest_of
from reportcases import cases, serve_banded, sweep_banded
from reportdata import REMEDY_SHARES, differing, every_record, remedies_record, sampler_record

import mminfer.report.render as render
from mminfer.report.decided import DecisionLog
from mminfer.report.render import (
    decide_modules,
    environment,
    render_reports,
    rendering_context,
    sections_facts,
)

TEMPLATES = sorted([*render.SECTIONS.glob("*/*.md.j2"), *render.TEMPLATE.parent.glob("*.j2")])
MACRO = re.compile(r"\{% macro (\w+)\(([^)]*)\) %\}(.*?)\{%-? ?endmacro %\}", re.S)
CALL = re.compile(r"\b(\w+)\(decide\.(\w+)\.(\w+)\(")
ASKED = re.compile(r"\bdecide\.(\w+)\.(\w+)\b")
VARIANT = re.compile(r'v == "(\w+)"')
PLAIN = "{% if v %}"  # a plain decision's words: written where its value is True


def text_of(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def worded() -> list[tuple[Path, str, list[str], str, str]]:
    """Every macro a template calls with a decision: (template, macro, its parameters, its body,
    the decision's key), one entry per macro and key."""
    found = []
    for path in TEMPLATES:
        text = text_of(path)
        macros = {name: (params, body) for name, params, body in MACRO.findall(text)}
        for name, folder, function in dict.fromkeys(CALL.findall(text)):
            if name in macros:
                params, body = macros[name]
                names = [p.strip() for p in params.split(",") if p.strip()]
                found.append((path, name, names, body, f"{folder}.{function}"))
    return found


def test_every_decision_a_template_asks_is_a_decide_function():
    asked = {f"{a}.{b}" for path in TEMPLATES for a, b in ASKED.findall(text_of(path))}
    modules = decide_modules()
    missing = [
        key
        for key in sorted(asked)
        if not any(
            callable(getattr(module, key.split(".")[1], None))
            for module in modules.get(key.split(".")[0], ())
        )
    ]
    assert missing == []
    assert len(worded()) > 100  # the scan reads the templates' words


def test_no_template_decides_by_comparing_figures_in_an_if():
    """A comparison is a decide.py function (its interval, its level), never a template's
    ``{% if a > b %}`` on two printed figures."""
    compares = re.compile(r"\{%-? (?:el)?if [^%]*(?:[^-]> | < | >= | <= )[^%]*%\}")
    found = [
        f"{path.name}: {match.group(0)}"
        for path in TEMPLATES
        for match in compares.finditer(text_of(path))
    ]
    assert found == []


# Decisions whose words say a printed figure grew, fell or stayed, or say what ran (rounds, steps
# clocked, what was filled, a load as a cause): each is judged by an oracle of its own, from the
# raw runs (tests/oracles_*.py), apart from the decide.py function that chose its words.
DIRECTION_WORDS = ("늘었", "줄었", "늘지", "줄지", "커졌", "작아졌", "그대로", "늘어", "줄어")
METHOD_WORDS = ("쟀다", "재고", "채운", "채웠", "재지 않", "보간", "건너", "때만 기계가 바빴고")
NOT_A_FIGURE_S_MOVE = {  # a direction word that no figure's move states
    "conversation.no_breaks": "the template rendered the ids as they were (그대로): no figure",
    "serve.context_beyond_measured": "a longer context costs more: a caution, no figure moved",
    "anatomy.fewer_flops_same_calls": "calls 그대로: the counts, exact, no timed figure",
}
NOT_THIS_RUN_S_WORK = {  # a method word that is not said of work this run did or skipped
    "repetition.off_against_temp": "generate skips the penalty at 1.0: MiniMind's behaviour",
    "topk.counts_against_temp": "the rule's own method, which every topk.json ran",
    "topp.positions_compared": "one position: the report was given no topp_detail.json",
}


def test_every_decision_worded_with_a_direction_or_what_ran_has_an_oracle():
    exempt = NOT_A_FIGURE_S_MOVE | NOT_THIS_RUN_S_WORK
    words = DIRECTION_WORDS + METHOD_WORDS
    lacking = sorted(
        {
            key
            for _, _, _, body, key in worded()
            if any(word in body for word in words) and key not in exempt and key not in ORACLES
        }
    )
    assert lacking == []
    assert set(exempt) <= {key for *_, key in worded()}  # no stale exemption


def facts_of(records: dict) -> dict:
    """What a report's templates are rendered with (mminfer.report.render.render_one): each
    section's facts, the run's, the rendering's records, decide and figure log."""
    facts = {"busy": [], "cache_script": "cache.py", "pictures": None, "target": "report.md"}
    facts |= {"glossary": []}  # the run section's folded glossary (render.glossary)
    return facts | sections_facts(records) | rendering_context(records)


def shapes() -> list[dict]:
    """Records a variant's words can read: the quiet golden with a step whose ids part, a MoE
    model's with two bands, a sampler whose paths part, a course run, a busy one."""
    parted = {"same": differing(margin=1e-6, diff=2e-6)}
    banded = {"sweep": sweep_banded(True), "serve": serve_banded(True)}
    return [
        every_record(remedies=remedies_record(REMEDY_SHARES | {"compile": 0.6})) | parted,
        dict(cases()["moe"]["records"]) | parted | banded,
        every_record(sampler=sampler_record(identical=27)) | parted,
        dict(cases()["course"]["records"]),
        dict(cases()["machine_busy"]["records"]),
    ]


def arguments(names: list[str], records: dict, facts: dict) -> list:
    """A macro's figures after its value: a path, a term, a table row's cliff or remedy, ..."""
    samples = {
        "path": lambda: "with_cache",
        "term": lambda: "dispatch",
        "name": lambda: "validation",  # a lookup case
        "cliff": lambda: records["serve"].cliffs[0],
        "r": lambda: records["remedies"].remedies["in_place_cache"],
        "crossing": lambda: facts["latency"]["crossing"],
    }
    return [samples[name]() for name in names]


def returns_bool(key: str) -> bool:
    """Whether the decision ``key`` is a plain one (its function returns a bool)."""
    return inspect.signature(honest_of(key)).return_annotation in ("bool", bool)


FORCED = [
    (path, name, params, variant, key)
    for path, name, params, body, key in worded()
    for variant in [
        *dict.fromkeys(VARIANT.findall(body)),
        *([True] if PLAIN in body and returns_bool(key) else []),
    ]
]


@pytest.fixture(scope="module")
def modules():
    """Each shape's facts, and each template's module made on them (its macros, once)."""
    env = environment()
    made = []
    for records in shapes():
        facts = facts_of(records)
        by_path = {}
        for path in TEMPLATES:
            name = path.relative_to(
                render.SECTIONS if render.SECTIONS in path.parents else render.TEMPLATE.parent
            ).as_posix()
            try:
                by_path[path] = env.get_template(name).make_module(facts)
            except Exception:  # a template whose record this shape lacks
                continue
        made.append((records, facts, by_path))
    return made


@pytest.mark.parametrize(
    ("path", "name", "params", "variant", "key"),
    FORCED,
    ids=[f"{key}={variant}" for _, _, _, variant, key in FORCED],
)
def test_each_variant_a_macro_branches_on_renders_words(modules, path, name, params, variant, key):
    """The decision forced to each variant its macro words (whether or not a golden case's runs
    reach it): some record shape renders that branch's words, so no variant is dead text."""
    failures = []
    for records, facts, by_path in modules:
        module = by_path.get(path)
        if module is None:
            continue
        try:
            words = str(getattr(module, name)(variant, *arguments(params[1:], records, facts)))
        except Exception as error:  # a shape this variant's figures are not in
            failures.append(f"{type(error).__name__}: {error}")
            continue
        if words.strip():
            return
        failures.append("no words")
    pytest.fail(f"{path.name} {name}({variant!r}) rendered on no shape: {failures}")


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
    ("latency.sweep_crossing", "never"),
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
