"""Check a results folder's reports against the files they were written from.

``python -m mminfer.report.check RESULTS`` reads every result file in the folder (config key
``outdir``) and renders each report from the files its rule reads (report.md from the task's,
beyond.md from all), as the report rules do: every decision a report words is asked of its
measure's decide.py on the records read back, from their raw runs (``with_cache_runs_s``, a
probe's ``runs_s``, ...), never from stored intervals or words. The check then holds:

- each report in the folder to that rendering: one that words a decision otherwise (edited by
  hand, or stale) is named by its first differing line;
- every figure printed under its JSON key (the ``figure`` filter and the keyed interval filters,
  mminfer.report.render.Figures) to that key's value at the printed precision (three significant
  digits, or every digit of an integer), one key printed with one value in both reports;
- every stored decision (a measurement's ``stored``: time.json's cache_faster, each lookup K's
  faster, ...) to what the function that wrote it gives from the runs, and every timed record's
  busy flag to what its figures say.

One line per wrong figure, parted decision and differing report, and a count of the decisions
worded; the exit status is 1 where any check fails, 2 where the folder cannot be read, 0
otherwise. The re-derivations that guard the decide.py functions themselves are the suite's
oracles (tests/oracles_*.py). A report rendered by another version of mminfer may hold other
sentences: the check is of what this version writes from these files.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from mminfer.errors import MminferError
from mminfer.measurements import (
    MEASUREMENTS,
    REPORTS,
    TASK_SCRIPT,
    picture_file,
    pictures,
    read_result,
    resolve,
)
from mminfer.records.machine import is_busy
from mminfer.report.busy import timed_contentions
from mminfer.report.decided import DecisionLog
from mminfer.report.render import Figure, printed_as, render_reports


def read_folder(folder: Path) -> dict[str, object]:
    """Every measurement's record found in ``folder``, by name; the task's six must be there."""
    records = {}
    for entry in MEASUREMENTS:
        path = folder / entry.filename
        if path.exists():
            records[entry.name] = read_result(path)
    missing = [entry.filename for entry in MEASUREMENTS if entry.task and entry.name not in records]
    if missing:
        raise MminferError(
            f"{folder} is not a results folder (config key outdir): it lacks {', '.join(missing)}"
        )
    return records


def rendered(
    records: dict[str, object], results: str | None = None, figures: list[Figure] | None = None
) -> tuple[dict[str, str], DecisionLog]:
    """report.md and beyond.md as the report rules render them from ``records`` in the results
    folder ``results`` (pictures and cache.py linked from there), by file name, and the log of
    what they wrote; ``figures`` collects the figures they printed under their keys."""
    log = DecisionLog()
    texts = render_reports(
        records,
        pictures={name: picture_file(name) for name in pictures()},
        cache_script=TASK_SCRIPT,
        decisions=log,
        results=results,
        figures=figures,
    )
    return texts, log


# A figure's key: a measurement's name, then fields (".speedup") and mapping keys ("[0.9]").
KEY_PART = re.compile(r"\.([A-Za-z_]\w*)|\[([^\]]+)\]")


def value_of(records: dict[str, object], key: str):
    """The JSON value a figure's key names: "time.speedup" is time.json's ``speedup``,
    "temp[0.3].distinct" temp.json's ``"0.3"``'s ``distinct``."""
    name = re.match(r"\w+", key).group(0)
    value = records[name]
    rest = key[len(name) :]
    for part in KEY_PART.finditer(rest):
        field, item = part.groups()
        value = value[item] if item is not None else getattr(value, field)
    return value


def wrong_figures(figures: list[Figure], records: dict[str, object]) -> list[str]:
    """Each printed figure that is not its key's value at the printed precision, and each key
    printed with more than one value, as lines."""
    lines = []
    for figure in figures:
        expected = printed_as(value_of(records, figure.key), figure.style, figure.scale)
        if figure.printed != expected:
            lines.append(
                f"WRONG FIGURE {figure.key} in {figure.report}: printed {figure.printed}, its "
                f"value is {expected}"
            )
    values: dict[tuple[str, float], set[str]] = {}
    for figure in figures:
        values.setdefault((figure.key, figure.scale), set()).add(figure.printed)
    for (key, _), printed in values.items():
        if len(printed) > 1:
            lines.append(f"TWO VALUES {key}: printed as {', '.join(sorted(printed))}")
    return lines


def stored_decisions(records: dict[str, object]) -> list[str]:
    """Every stored decision of the records beside the same function's answer from their runs
    (each measurement's ``stored``, its decide.py), and every timed record's busy flag beside
    its contention figures (mminfer.records.machine.is_busy): one line for each that parts."""
    wrong = []
    for measurement in MEASUREMENTS:
        record = records.get(measurement.name)
        if record is None or measurement.stored is None:
            continue
        for key, (stored, again) in resolve(measurement.stored)(record).items():
            if stored != again:
                wrong.append(
                    f"STORED      {measurement.name}.json {key}: {stored!r} stored, {again!r} "
                    "from its runs"
                )
    time = records.get("time")
    others = {name: record for name, record in records.items() if name != "time"}
    for name, contention in (timed_contentions(time, **others) if time else {}).items():
        busy = is_busy(contention.cpu_share, contention.cpu_pressure)
        if contention.busy != busy:
            wrong.append(
                f"STORED      {name}.json contention.busy: {contention.busy!r} stored, {busy!r} "
                "from its CPU share and pressure"
            )
    return wrong


def first_difference(found: str, expected: str) -> tuple[int, str, str]:
    """The first line (1-based) where a report on disk differs from its rendering, with both
    lines ("" where one text has ended)."""
    found_lines, expected_lines = found.splitlines(), expected.splitlines()
    for number, (one, other) in enumerate(zip(found_lines, expected_lines), start=1):
        if one != other:
            return number, one, other
    number = min(len(found_lines), len(expected_lines)) + 1
    tail = found_lines[number - 1 : number] or [""]
    rendered_tail = expected_lines[number - 1 : number] or [""]
    return number, tail[0], rendered_tail[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mminfer.report.check",
        description="Render a results folder's reports from its files and hold the folder's "
        "reports, printed figures and stored decisions to them; exit 1 on any that parts.",
    )
    parser.add_argument("results", type=Path, help="the results folder (config key outdir)")
    arguments = parser.parse_args(argv)
    try:
        records = read_folder(arguments.results)
    except MminferError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    figures: list[Figure] = []
    texts, log = rendered(records, str(arguments.results), figures)
    print(f"{log.summary()}, each from the runs of {arguments.results}")
    wrong = wrong_figures(figures, records)
    for line in wrong:
        print(line)
    print(f"{len(figures)} figures printed under their JSON keys, {len(wrong)} wrong")
    parted = stored_decisions(records)
    for line in parted:
        print(line)
    print(f"{len(parted)} stored decisions part from their runs")
    stale = [
        (path, first_difference(path.read_text(encoding="utf-8"), texts.get(path.name, "")))
        for path in (arguments.results / name for name in REPORTS.values())
        if path.exists() and path.read_text(encoding="utf-8") != texts.get(path.name)
    ]
    for path, (number, found, expected) in stale:
        print(
            f"{path} is not what these files render with this version of mminfer: its "
            "words are not the ones these runs decide; rerun the report rules "
            "(snakemake -R report beyond)"
        )
        print(f"  line {number}: {found!r}")
        print(f"  rendered: {expected!r}")
    return 1 if wrong or parted or stale else 0


if __name__ == "__main__":
    sys.exit(main())
