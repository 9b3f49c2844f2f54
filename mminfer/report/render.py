"""Step 7: report.md, in Korean, from the records the other rules wrote: the rendering.

Python decides the facts and verdicts of each section: one facts function per measurement, its
entry's ``facts`` in mminfer.measurements ("module:function", resolved here): ``<name>_facts`` in
its own module mminfer/measures/<rule>/<name>.py where it reads its rule's records only, a join of
mminfer/report/joins.py where it reads another rule's too. Its parameters are named after the
measurements whose records it reads, so render_report hands each its records by name
(:func:`section_facts`). The Korean
sentences live in templates: report/report.md.j2 includes mminfer/measures/<rule>/<name>.md.j2 per
measurement in order, and a sentence chooses its words only by a boolean or an enum its facts
give; a converted section's sentences that state a relation live in its ``SENTENCES`` table
beside its record, words and predicate together, asked for by ``{{ say(key) }}``
(:class:`Say`, mminfer.records.sentences). Every number is read from the result files' records;
nothing is measured or assumed here.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import re
from collections.abc import Mapping
from pathlib import Path

import jinja2

from mminfer.measurements import MEASUREMENTS, declared, resolve
from mminfer.measures.cache.same import Same
from mminfer.measures.temp.temp import Temperatures
from mminfer.records.claims import ClaimLog, Tally, claim
from mminfer.records.interval import Interval, coverage_text, place, rounded
from mminfer.records.sentences import Sentence
from mminfer.report.korean import particle, written

TEMPLATE = Path(__file__).resolve().parents[2] / "report" / "report.md.j2"
# The measurements' section templates, each in its rule's folder (<rule>/<name>.md.j2).
MEASURES = Path(__file__).resolve().parents[1] / "measures"


# --- formatting: the template's filters ----------------------------------------------------------


def fmt_bytes(n: int) -> str:
    if n >= 1 << 30:
        return f"{n:,} B ({n / (1 << 30):.2f} GiB)"
    if n >= 1 << 20:
        return f"{n:,} B ({n / (1 << 20):.2f} MiB)"
    if n >= 1 << 10:
        return f"{n:,} B ({n / (1 << 10):.1f} KiB)"
    return f"{n:,} B"


def fmt_ms(seconds: float | None) -> str:
    return "—" if seconds is None else f"{seconds * 1000:.2f} ms"


def thousands(n: int | None) -> str:
    return "—" if n is None else f"{n:,}"


def interval_text(interval: Interval, scale: float = 1.0, unit: str = "") -> str:
    """A measured figure with its interval, at the precision the interval allows
    (mminfer.records.interval.place): "60 ms (96 % 구간 30–90 ms)"; ``scale`` turns the record's
    unit into the printed one (1000 for seconds as ms). One value: the value alone, marked as one
    run."""
    scaled = Interval(
        median=interval.median * scale,
        low=interval.low * scale,
        high=interval.high * scale,
        coverage=interval.coverage,
        level=interval.level,
        runs=interval.runs,
    )
    shown = [value for value in (scaled.median, scaled.low, scaled.high) if value]
    digits = max(0, *(-place(value, scaled) for value in shown))

    def text(value: float) -> str:
        return f"{rounded(value, scaled):,.{digits}f}"

    if interval.runs < 2:
        return f"{text(scaled.median)}{unit} (1회)"
    return (
        f"{text(scaled.median)}{unit} ({coverage_text(interval.coverage)} 구간 "
        f"{text(scaled.low)}–{text(scaled.high)}{unit})"
    )


# The template's other filters; fmt takes Python's format spec: {{ speedup|fmt(".2f") }}.
FILTERS = {
    "us": lambda seconds: f"{seconds * 1e6:.3g} µs",
    "ns": lambda seconds: f"{seconds * 1e9:.3g} ns",
    "percent": lambda value, digits=1: "—" if value is None else f"{value * 100:.{digits}f}%",
    "fmt": lambda value, spec: "—" if value is None else format(value, spec),
    # significant digits, a power of ten as Korean reads it: {{ 9.54e-7|sig }} is "9.54 × 10⁻⁷"
    "sig": lambda value, digits=3: "—" if value is None else written(value, digits),
    "cell": lambda text: text.replace("|", "\\|").replace("\n", " "),  # one markdown table cell
    "particle": particle,  # {{ b | particle("은/는") }}: "32는", as the number is read (korean.py)
    # a figure with its interval (mminfer.records.interval): {{ time.with_cache_interval|ms_in }}
    # is "193 ms (98 % 구간 190–200 ms)", {{ time.speedup_interval|x_in }} "5.0배 (...)"
    "ms_in": lambda interval: interval_text(interval, 1000.0, " ms"),
    "x_in": lambda interval: interval_text(interval, 1.0, "배"),
    "percent_in": lambda interval: interval_text(interval, 100.0, " %"),
}


def anchor(heading: str) -> str:
    """The fragment GitHub gives a heading: lower case, punctuation but hyphens and underscores
    dropped, each space a hyphen ("KV 캐시" -> "kv-캐시"); ## 한눈에 links to it."""
    kept = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return kept.replace(" ", "-")


def table_row(*cells) -> str:
    """One Markdown table row: ``{{ row(a, b, c) }}`` is "| a | b | c |" (a template's long row,
    one cell per line)."""
    return "| " + " | ".join(str(cell) for cell in cells) + " |"


# --- the run section (실행 정보): which model, where --------------------------------------------


def yarn_of(config: dict) -> str:
    """What MiniMind's YaRN does to this model's angles: "none" (no rope_scaling), "unchanged"
    (a rotary table no longer than the original positions: only attention_factor applies) or
    "scaled"."""
    scaling = config.get("rope_scaling")
    if not scaling:
        return "none"
    if config["max_position_embeddings"] <= scaling["original_max_position_embeddings"]:
        return "unchanged"
    return "scaled"


COURSE_FOLDER = "/opt/mm"  # where a MiniMind course machine keeps its checkpoints


def run_facts(same: Same, temp: Temperatures) -> dict:
    """Which model, checkpoints, backend and device produced the numbers, from which inputs.

    ``course_folder``: the claim that the checkpoints came from the course's folder, /opt/mm
    (both models' checkpoints lie in it); else ``folders`` names the folders they did come
    from, as their run blocks record them."""
    pretrain = same.run
    sft = next(iter(temp.values())).run
    if pretrain.device == "cuda":
        device = pretrain.device_name
    else:
        device = "cpu"
    checkpoints = [pretrain.checkpoint, sft.checkpoint]
    folders = sorted({str(Path(checkpoint).parent) for checkpoint in checkpoints})
    inside = all(Path(checkpoint).is_relative_to(COURSE_FOLDER) for checkpoint in checkpoints)
    return {
        "pretrain": pretrain,
        "sft": sft,
        "device": device,
        "prompt": same.prompt,
        "yarn": yarn_of(pretrain.config),
        "folders": folders,
        "course_folder": claim("run.course_folder", inside, folder=COURSE_FOLDER),
    }


# --- sentences: a converted section's table (mminfer.records.sentences) ---------------------------


@functools.cache
def sentence_table() -> dict[str, Sentence]:
    """Every converted section's sentences by key: the ``SENTENCES`` of each entry's facts module
    and of its record's (a join's sentences in mminfer.report.joins, a record's own beside it).

    A sentence's key names a measurement (its section) and its predicate's parameters name
    measurements; a key given twice is an error."""
    names = {entry.name for entry in MEASUREMENTS}
    modules = {entry.facts.split(":")[0] for entry in MEASUREMENTS if entry.facts is not None}
    modules |= {declared(entry.record)[0] for entry in MEASUREMENTS}
    table = {}
    for module in sorted(modules):
        for sentence in getattr(importlib.import_module(module), "SENTENCES", ()):
            unknown = [
                name for name in [sentence.section, *sentence.parameters] if name not in names
            ]
            if unknown:
                raise KeyError(f"sentence {sentence.key!r} names no measurement: {unknown}")
            if sentence.key in table:
                raise KeyError(f"sentence {sentence.key!r} is given twice")
            table[sentence.key] = sentence
    return table


class Say:
    """The template's ``say``: ``{{ say("kvbytes.bytes") }}`` writes the words of what holds on
    the rendering's records, or nothing where the predicate is false, and tallies the question in
    the log ``said`` tallies into (one :class:`Tally`, so the glance modules' bodies count once)."""

    def __init__(self, env: jinja2.Environment, tally: Tally):
        self.env = env
        self.tally = tally
        self.records: Mapping[str, object] = {}
        self.compiled: dict[str, jinja2.Template] = {}  # each sentence's words, compiled once

    def __call__(self, key: str, **figures) -> str:
        sentence = sentence_table()[key]
        chosen = sentence.choose(self.records)
        if not self.tally(sentence.claim(chosen)):
            return ""
        words = sentence.words_of(chosen)
        if words not in self.compiled:
            self.compiled[words] = self.env.from_string(words)
        return self.compiled[words].render({**self.records, **figures})


# --- rendering -----------------------------------------------------------------------------------


@functools.cache
def environment(folder: Path = TEMPLATE.parent) -> jinja2.Environment:
    """The templates' Jinja2 environment, made once per folder (its templates compiled once and
    reloaded when a file changes); its ``said`` (a claim's check, mminfer.records.claims) tallies
    into the log the rendering in progress sets, and its ``say`` (a converted section's sentence by
    key, mminfer.records.sentences) reads the records it sets."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader([folder, MEASURES]),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(FILTERS, fmt_bytes=fmt_bytes, ms=fmt_ms, thousands=thousands, anchor=anchor)
    env.globals["row"] = table_row
    env.globals["said"] = Tally(ClaimLog())
    env.globals["say"] = Say(env, env.globals["said"])
    return env


def section_facts(function, records: Mapping[str, object]) -> dict:
    """A section's facts: ``function`` called with the records its parameters name.

    A facts function's parameters are measurement names (``sweep_time_facts(sweep, time)``); a
    record the report was not given is None. A parameter that names no measurement is an error (a
    typo would otherwise read as a record never given).
    """
    names = {entry.name for entry in MEASUREMENTS}
    arguments = {}
    for parameter in inspect.signature(function).parameters:
        if parameter not in names:
            raise KeyError(
                f"{function.__name__}'s parameter {parameter!r} names no measurement "
                f"(mminfer.measurements): {sorted(names)}"
            )
        arguments[parameter] = records.get(parameter)
    return function(**arguments)


def render_report(
    records: Mapping[str, object],
    pictures: dict | None = None,
    cache_script: str | None = None,
    template=TEMPLATE,
    claims: ClaimLog | None = None,
) -> str:
    """report.md from the records, keyed by measurement name (mminfer.measurements).

    The rule passes every measurement; a plain run of the task (scripts/plain_task.py) only the
    six task files, and the report leaves out the sections of what is absent. ``pictures`` maps
    each picture to a PNG path relative to the report, ``cache_script`` is the task's cache.py
    relative to it; ``template`` is the rule's template input (report/report.md.j2, which
    includes each measurement's section from its rule's folder). ``claims``, where given, collects
    every claim the
    report asked about (mminfer.records.claims): those it wrote and those it suppressed.
    """
    missing = [entry.name for entry in MEASUREMENTS if entry.task and entry.name not in records]
    if missing:
        raise KeyError(f"render_report needs the task's measurements; missing {missing}")
    facts = {
        "run": section_facts(run_facts, records),
        "cache_script": cache_script,
        "pictures": pictures,
    }
    sections = []
    glances = []
    for entry in MEASUREMENTS:
        if entry.section is None or entry.name not in records:
            continue
        facts[entry.name] = section_facts(resolve(entry.facts), records)
        sections.append(entry.section)
        if entry.glance is not None:
            glances.append((entry.section, section_facts(resolve(entry.glance), records)))
    facts["sections"] = sections
    template = Path(template)
    log = claims if claims is not None else ClaimLog()
    env = environment(template.parent.resolve())
    tally = env.globals["said"]
    env.globals["say"].records = records
    tally.log = ClaimLog()  # the modules' bodies are rendered only to reach their macros
    modules = {section: env.get_template(section).make_module(facts) for section, _ in glances}
    tally.log = log
    facts["glance_rows"] = [modules[section].glance(glance) for section, glance in glances]
    facts["glossary"] = [
        modules[section].term(key) for key, section in glossary_owners(glances).items()
    ]
    return unwrap(env.get_template(template.name).render(facts)).rstrip() + "\n"


def glossary_owners(glances: list) -> dict:
    """Each glossary key and the section that defines it: the first, in report order, whose
    Glance lists it (a word is defined once, where it first appears)."""
    owners = {}
    for section, glance in glances:
        for key in glance.terms:
            owners.setdefault(key, section)
    return owners


def starts_a_block(line: str) -> bool:
    """A line Markdown never joins to the one before: blank, a heading, a table row, a picture,
    a list item, an HTML tag (``<details>``)."""
    stripped = line.strip()
    return stripped == "" or stripped.startswith(("#", "|", "![", "- ", "<"))


def ends_a_block(line: str) -> bool:
    """A line Markdown never joins the next one to: blank, a heading, a table row, a picture, an
    HTML tag."""
    stripped = line.strip()
    return stripped == "" or stripped.startswith(("#", "|", "![", "<"))


def unwrap(text: str) -> str:
    """The templates' wrapped prose as Markdown reads it: each paragraph (and list item) on one
    line, its lines joined by a space. Headings, tables, pictures and blank lines stay as they
    are."""
    lines = []
    for line in text.split("\n"):
        if lines and not starts_a_block(line) and not ends_a_block(lines[-1]):
            lines[-1] = lines[-1] + " " + line.strip()
        else:
            lines.append(line)
    return "\n".join(lines)
