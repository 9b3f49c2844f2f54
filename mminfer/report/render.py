"""Step 7: report.md, in Korean, from the records the other rules wrote: the rendering.

Each section is a folder, mminfer/report/sections/<section>/: per measurement it shows, its facts
and glance functions and its template (<name>.py beside <name>.md.j2). The registry names the
functions (its entry's ``facts`` and ``glance``, "module:function", resolved here); their
parameters are named after the measurements whose records they read, so the rendering hands each
its records by name (:func:`section_facts`). The words live in the templates: a macro per
decision, a branch per variant, called with the value the measure's decide.py gives on the raw
runs, ``{{ ids(decide.cache.ids_compared(records.same)) }}`` (``decide``: mminfer.report.decided,
which logs every decision asked). pages/report.md.j2 includes the sections' templates in report
order (beyond.md.j2 beside it; macros.md.j2 theirs). Every number is read from the result files'
records; nothing is measured or assumed here.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import inspect
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

import jinja2

import mminfer.measures
import mminfer.report.busy as busy_floor
from mminfer.measurements import MEASUREMENTS, REPORTS, headings, report_reads, resolve
from mminfer.records import Glance
from mminfer.records.interval import Interval, coverage_text, place, rounded
from mminfer.records.machine import BUSY_PRESSURE, BUSY_SHARE
from mminfer.report.busy import busy_groups, busy_of
from mminfer.report.decided import Decided, DecisionLog
from mminfer.report.korean import particle, significant, written
from mminfer.report.sections.run.run import run_facts

# report.md's skeleton, beyond.md's beside it, and the macros every section imports
TEMPLATE = Path(__file__).resolve().parent / "pages" / "report.md.j2"
# The reports' titles, by file (Measurement.report's REPORTS): the tests tell the two apart by them.
TITLES = {
    "report.md": "MiniMind generate 측정: KV 캐시와 샘플링",
    "beyond.md": "MiniMind generate 측정: 과제 너머",
}
# The sections, a folder each (<section>/<name>.md.j2 beside <section>/<name>.py).
SECTIONS = Path(__file__).resolve().parent / "sections"


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
    """A measured figure with its interval: the median to three significant digits, the ends at
    the precision the interval allows (mminfer.records.interval.place): "62.3 ms (96 % 구간
    30–90 ms)", so that two printed medians divide to the printed ratio; ``scale`` turns the
    record's unit into the printed one (1000 for seconds as ms). One value: the value alone,
    marked as one run."""
    scaled = interval.scaled(scale)
    shown = [value for value in (scaled.median, scaled.low, scaled.high) if value]
    digits = max([0, *(-place(value, scaled) for value in shown)])

    def text(value: float) -> str:
        return f"{rounded(value, scaled):,.{digits}f}"

    median = significant(scaled.median)  # three significant digits; only the ends are rounded
    if interval.runs < 2:
        return f"{median}{unit} (1회)"
    return (
        f"{median}{unit} ({coverage_text(interval.coverage)} 구간 "
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
    # a decision's words, wrapped in its macro, on one line: {% filter line %} … {% endfilter %}
    "line": lambda text: " ".join(part.strip() for part in text.split("\n") if part.strip()),
}


@dataclass(frozen=True)
class Figure:
    """One figure a report printed under the JSON key it is the value of."""

    report: str  # the report's file, "report.md"
    key: str  # "<measurement>.<field>": time.speedup, kvbytes.measured_bytes
    printed: str  # the number as printed ("7.56", "1,180", "204,800")
    style: str  # "sig": three significant digits (korean.significant); "int": every digit,
    # with thousands separators; "plain": every digit, none (measured_bytes, as the task asks)
    scale: float  # the printed unit over the record's (1000: seconds printed as ms)


def printed_as(value: float, style: str, scale: float = 1.0) -> str:
    """How a figure of ``style`` prints ``value`` (the record's unit) times ``scale``."""
    if style == "int":
        return f"{round(value * scale):,}"
    if style == "plain":  # every digit, no separator: a number as the task's file holds it
        return str(round(value * scale))
    return significant(value * scale)


# The number an interval's text opens with, its median as printed: "1,180" of "1,180 ms (...)".
LEADING_NUMBER = re.compile(r"-?[\d,]+(?:\.\d+)?(?: × 10[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)?")


class Figures:
    """One rendering's figures printed under their JSON keys: ``{{ time.speedup|figure(
    "time.speedup") }}`` is "7.56"; ``{{ time.with_cache_interval|ms_in("time.with_cache_s") }}``
    logs the interval's median. The filters (:data:`FIGURE_FILTERS`) log into the rendering's own,
    its context's ``figure_log``. The checker (mminfer.report.check) holds every logged figure to
    its key's value in the JSON, and each key to one printed value."""

    def __init__(self, report: str, log: list[Figure]):
        self.report = report
        self.log = log

    def logged(self, key: str | None, printed: str, style: str, scale: float) -> str:
        if key is not None:
            self.log.append(Figure(self.report, key, printed, style, scale))
        return printed


def printer_of(context) -> Figures:
    """The rendering's figure log in ``context``; a template rendered alone logs into none."""
    return context.get("figure_log") or Figures("", [])


@jinja2.pass_context
def figure(context, value, key: str, style: str = "sig", scale: float = 1.0) -> str:
    if value is None:
        return "—"
    return printer_of(context).logged(key, printed_as(value, style, scale), style, scale)


def interval_filter(scale: float, unit: str):
    """A filter printing an interval in a unit (interval_text), its median logged under a key."""

    @jinja2.pass_context
    def printed(context, interval: Interval, key: str | None = None) -> str:
        text = interval_text(interval, scale, unit)
        printer_of(context).logged(key, LEADING_NUMBER.match(text).group(0), "sig", scale)
        return text

    return printed


# a figure with its interval (mminfer.records.interval): {{ time.with_cache_interval|ms_in }} is
# "193 ms (98 % 구간 190–200 ms)", {{ time.speedup_interval|x_in }} "5.03배 (...)"; a key names
# the JSON field its median is (and logs it)
FIGURE_FILTERS = {
    "figure": figure,
    "ms_in": interval_filter(1000.0, " ms"),
    "x_in": interval_filter(1.0, "배"),
    "percent_in": interval_filter(100.0, " %"),
    "s_in": interval_filter(1.0, " s"),
    "n_in": interval_filter(1.0, ""),  # a count
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


# --- rendering -----------------------------------------------------------------------------------


@functools.cache
def environment(folder: Path = TEMPLATE.parent) -> jinja2.Environment:
    """The templates' Jinja2 environment, made once per folder (its templates compiled once and
    reloaded when a file changes); a rendering gives its records, ``decide`` and figure log in
    its context (render_one); the ``figure`` filters log each figure printed under its key into
    that context's log."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader([folder, SECTIONS]),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(FILTERS, fmt_bytes=fmt_bytes, ms=fmt_ms, thousands=thousands, anchor=anchor)
    env.filters.update(FIGURE_FILTERS)
    env.globals["headings"] = headings()
    env.globals["busy_groups"] = busy_groups
    env.globals["busy_share"] = BUSY_SHARE
    env.globals["busy_pressure"] = BUSY_PRESSURE
    env.globals["row"] = table_row
    env.globals["retime_command"] = retime_command
    return env


@functools.cache
def decide_modules() -> dict[str, tuple]:
    """The modules the templates' ``decide.<folder>`` reads, by folder name: the measures
    folder's decide.py (what one run decides: mminfer/measures/<folder>/decide.py), then its
    report section's joins.py (what its record decides beside another's: a join lives in its
    section, mminfer/report/sections/<folder>/joins.py, never in a measures folder); and
    ``busy``, the report's floor (mminfer.report.busy: which timing records ran busy)."""
    measures = Path(mminfer.measures.__file__).parent
    paths = [*measures.glob("*/decide.py"), *SECTIONS.glob("*/joins.py")]  # decide.py first
    found: dict[str, tuple] = {"busy": (busy_floor,)}  # the report floor: who ran busy
    for path in paths:
        package = "mminfer.measures" if path.name == "decide.py" else "mminfer.report.sections"
        module = importlib.import_module(f"{package}.{path.parent.name}.{path.stem}")
        found[path.parent.name] = (*found.get(path.parent.name, ()), module)
    return found


def section_facts(function, records: Mapping[str, object]) -> dict:
    """A section's facts: ``function`` called with the records its parameters name.

    A facts function's parameters are measurement names (``sweep_time_facts(sweep, time)``); a
    record the report was not given is None. A parameter that names no measurement is an error (a
    typo would otherwise read as a record never given); a ``**records`` takes every record.
    """
    names = {entry.name for entry in MEASUREMENTS}
    arguments = {}
    for name, parameter in inspect.signature(function).parameters.items():
        if parameter.kind is parameter.VAR_KEYWORD:  # ``**records``: every record the report has
            arguments = dict(records) | arguments
            continue
        if name not in names:
            raise KeyError(
                f"{function.__name__}'s parameter {name!r} names no measurement "
                f"(mminfer.measurements): {sorted(names)}"
            )
        arguments[name] = records.get(name)
    return function(**arguments)


def retime_command(busy: list[dict], target: str) -> str:
    """The command that re-times exactly the busy records' rules and rebuilds ``target`` (the
    report whose busy line names them) and what it needs, nothing else."""
    rules = " ".join(dict.fromkeys(b["rule"] for b in busy))
    return f"snakemake --cores 1 {target} -R {rules}"


def marked(glance: Glance, function, busy: list[dict]) -> Glance:
    """``glance`` marked busy where a record its row reads (``function``'s parameters, each a
    measurement) is among the busy line's."""
    names = set(inspect.signature(function).parameters)
    return replace(glance, busy=any(b["rule"] in names for b in busy))


def rendering_context(
    records: Mapping[str, object],
    report: str = "",
    decisions: DecisionLog | None = None,
    figures: list[Figure] | None = None,
) -> dict:
    """One rendering's own globals, given in its context (the cached environment holds none):
    its ``records`` (by name: what decide.py's functions take), its ``decide``
    (mminfer.report.decided, logging into ``decisions``), its figure log (``figure_log``,
    collecting into ``figures``)."""
    context = {
        "records": records,
        "decide": Decided(decide_modules(), decisions if decisions is not None else DecisionLog()),
        "figure_log": Figures(report, figures if figures is not None else []),
    }
    return context


def render_reports(
    records: Mapping[str, object],
    pictures: dict | None = None,
    cache_script: str | None = None,
    folder: Path = TEMPLATE.parent,
    decisions: DecisionLog | None = None,
    results: str | None = None,
    reports: tuple[str, ...] | None = None,
    figures: list[Figure] | None = None,
) -> dict[str, str]:
    """The reports, by file name, each rendered from its own records only (Measurement.report,
    mminfer.measurements.report_reads): report.md from the task's sections' records, beyond.md
    from every record. A report none of whose sections' records are given is left out (a plain
    run of the task, scripts/plain_task.py, passes the task's files only: no beyond.md).

    ``records`` holds records by measurement name; ``reports`` the report keys to render (every
    one by default). ``pictures`` maps each picture to a PNG path relative to the reports,
    ``cache_script`` is the task's cache.py relative to them; ``folder`` holds the reports'
    templates (report/). ``results`` is the results folder as the user names it, for the busy
    line's command (``snakemake --cores 1 <results>/report.md -R time``). ``decisions``, where
    given, collects every decision the reports asked (mminfer.report.decided), ``figures`` every
    figure they printed under its JSON key (:class:`Figure`).
    """
    texts = {}
    for report, file in REPORTS.items():
        if reports is not None and report not in reports:
            continue
        own = {name: records[name] for name in report_reads(report) if name in records}
        if not any(entry.report == report and entry.name in own for entry in sectioned()):
            continue
        texts[file] = render_one(
            report,
            own,
            pictures=pictures,
            cache_script=cache_script,
            folder=folder,
            decisions=decisions,
            results=results,
            figures=figures,
        )
    return texts


def sectioned() -> list:
    """The measurements that have a section of their own, in report order."""
    return [entry for entry in MEASUREMENTS if entry.template is not None]


def sections_facts(records: Mapping[str, object]) -> dict:
    """Each section's facts from ``records``, by measurement name (its entry's ``facts``), and the
    run section's (``run``) where same.json and temp.json are given."""
    facts = {}
    if "same" in records and "temp" in records:
        facts["run"] = section_facts(run_facts, records)
    for entry in sectioned():
        if entry.name in records:
            facts[entry.name] = section_facts(resolve(entry.facts), records)
    return facts


def render_one(
    report: str,
    records: Mapping[str, object],
    *,
    pictures: dict | None,
    cache_script: str | None,
    folder: Path,
    decisions: DecisionLog | None,
    results: str | None,
    figures: list[Figure] | None,
) -> str:
    """One report (``report``: "report" or "beyond") from ``records``, the records it reads.

    Each of its sections' facts and glance rows from their functions; the busy line (time.busy)
    names the busy records among ``records`` and the command that re-times them for this report
    only; each glance row that reads a busy record is marked. Its glossary defines exactly the
    terms its sections declare (their Glance's ``terms``), each by the first section template,
    in report order, whose ``term`` macro defines it."""
    file = REPORTS[report]
    if report == "report":
        missing = [entry.name for entry in MEASUREMENTS if entry.task and entry.name not in records]
        if missing:
            raise KeyError(f"report.md needs the task's measurements; missing {missing}")
    busy = busy_of(records) or []
    facts = {"busy": busy, "cache_script": cache_script, "pictures": pictures}
    facts |= sections_facts(records)
    own_sections, glances = [], []
    for entry in sectioned():
        if entry.name not in records:
            continue
        if entry.report == report:
            own_sections.append(entry.template)
        if entry.glance is not None:
            function = resolve(entry.glance)
            glance = marked(section_facts(function, records), function, busy)
            glances.append((entry, glance))
    # one rendering's records, decide and figure log, in its context (the cached environment holds
    # none); the modules' bodies are rendered only to reach their macros: their decisions and
    # figures go to scratch logs, the glance rows' and the report's to the rendering's own
    env = environment(Path(folder).resolve())
    context = rendering_context(records, file)
    decided, printer = context["decide"], context["figure_log"]
    facts |= context
    modules = {
        entry.name: env.get_template(entry.template).make_module(facts) for entry, _ in glances
    }
    decided.log = decisions if decisions is not None else DecisionLog()
    printer.log = figures if figures is not None else []
    own = [(entry, glance) for entry, glance in glances if entry.report == report]
    rows = [modules[entry.name].glance(glance) for entry, glance in own]
    target = f"{results}/{file}" if results else file
    glossary_lines = glossary([glance for _, glance in own], list(modules.values()))
    facts["target"] = target  # what the busy line's command rebuilds
    beyond = [
        entry.heading
        for entry in MEASUREMENTS
        if entry.report == "beyond" and entry.heading is not None
    ]
    text = env.get_template(f"{file}.j2").render(
        facts,
        title=TITLES[file],
        sections=own_sections,
        glance_rows=rows,
        glossary=glossary_lines,
        beyond=beyond if report == "report" else [],
    )
    return unwrap(text).rstrip() + "\n"


def render_report(
    records: Mapping[str, object],
    pictures: dict | None = None,
    cache_script: str | None = None,
    decisions: DecisionLog | None = None,
    results: str | None = None,
) -> str:
    """report.md alone, from the task's records in ``records`` (:func:`render_reports`)."""
    return render_reports(
        records, pictures, cache_script, decisions=decisions, results=results, reports=("report",)
    )[REPORTS["report"]]


def glossary(glances: list[Glance], modules: list) -> list[str]:
    """A report's glossary: each term its sections' Glances declare, once, in report order, defined
    by the first section template (of the sections whose records the report reads, in report
    order) whose ``term`` macro defines it."""
    lines = []
    for key in dict.fromkeys(key for glance in glances for key in glance.terms):
        definitions = [str(module.term(key)).strip() for module in modules]
        defined = [text for text in definitions if text]
        if not defined:
            raise KeyError(f"glossary term {key!r}: no section's term macro defines it")
        lines.append(defined[0])
    return lines


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
