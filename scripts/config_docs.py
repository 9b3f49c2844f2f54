"""The generated docs: docs/configuration.md from schemas/config.schema.yaml (every config key),
docs/outputs.md and the README's table of files from mminfer/measurements.py (every measurement).

    python scripts/config_docs.py            # rewrite the pages and the table
    python scripts/config_docs.py --check    # exit 1 when one is not its source's

tests/test_docs.py runs the check, so none drifts from its source.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
import typing
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from mminfer import measurements  # noqa: E402
from mminfer.workflow.inputs import read_schema  # noqa: E402

PAGE = REPO / "docs" / "configuration.md"
OUTPUTS_PAGE = REPO / "docs" / "outputs.md"
README = REPO / "README.md"
# The README's table of files lies between these lines, rewritten by this script.
README_START = "<!-- generated: outputs (scripts/config_docs.py, from mminfer/measurements.py) -->"
README_END = "<!-- /generated -->"
HEADER = """# Configuration

Every key of the workflow's config, with its default and meaning: generated from
`schemas/config.schema.yaml` by `scripts/config_docs.py` (do not edit this page by hand; edit the
schema and rerun the script). `config.yaml` at the top of the repository holds what you change;
`--configfile more.yaml` and `--config key=value` add to it (targets first: see
[troubleshooting](troubleshooting.md)). The config is checked once, before any job runs, with one
message per bad key.
"""


def shown(value) -> str:
    """A default as it would be written in config.yaml."""
    if value is None:
        return "`null`"
    if isinstance(value, str):
        return f"`{value}`"
    return f"`{json.dumps(value, ensure_ascii=False)}`"


def kind(entry: dict) -> str:
    if "enum" in entry:
        return " / ".join(str(value) for value in entry["enum"])
    types = entry.get("type", "object" if "properties" in entry else "")  # a $ref'd section
    if isinstance(types, list):
        return " or ".join(types)
    if types == "array" and "items" in entry:
        return f"list of {entry['items'].get('type', 'values')}"
    return types


def cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def rows(properties: dict, prefix: str = "") -> list[str]:
    """One table row per key; a section's keys follow it, dotted."""
    lines = []
    for key, entry in properties.items():
        name = f"{prefix}{key}"
        default = shown(entry["default"]) if "default" in entry else ""
        if "properties" in entry:  # a section: its keys follow with their defaults
            default = ""
        lines.append(
            f"| `{name}` | {kind(entry)} | {default} | {cell(entry.get('description', ''))} |"
        )
        if "properties" in entry:
            lines += rows(entry["properties"], f"{name}.")
    return lines


def timing_jobs() -> str:
    """The rules time.threads sets: the registry's timing rules, never a list kept by hand."""
    jobs = ", ".join(f"`{rule}`" for rule in measurements.alone_rules())
    return (
        f"The timing jobs: {jobs} (the rules of the measurements whose entry in "
        "`mminfer/measurements.py` is `alone`). Each takes every core (`rule_threads` in "
        "`rules/common.smk`) and on a cluster a node of its own (`--exclusive`), and gives torch "
        "`time.threads` threads, or the job's threads where it is null (`torch_threads`)."
    )


# A paragraph below a section's table, generated from the code that decides it.
SECTION_NOTES = {"time": timing_jobs}


def render(schema: dict) -> str:
    top = schema["properties"]
    simple = {key: entry for key, entry in top.items() if "properties" not in entry}
    sections = {key: entry for key, entry in top.items() if "properties" in entry}
    text = [HEADER, "## Inputs and where results go", ""]
    text += ["| key | type | default | meaning |", "| --- | --- | --- | --- |", *rows(simple), ""]
    for key, entry in sections.items():
        text += [f"## `{key}`", "", cell(entry.get("description", "")), ""]
        text += ["| key | type | default | meaning |", "| --- | --- | --- | --- |"]
        text += [*rows(entry["properties"], f"{key}."), ""]
        if key in SECTION_NOTES:
            text += [SECTION_NOTES[key](), ""]
    train = schema.get("$defs", {}).get("train")
    if train:
        text += ["## The demo's training keys (`demo_model.pretrain`, `demo_model.sft`)", ""]
        text += ["| key | type | meaning |", "| --- | --- | --- |"]
        for key, entry in train["properties"].items():
            text.append(f"| `{key}` | {kind(entry)} | {cell(entry.get('description', ''))} |")
        text.append("")
    return "\n".join(text)


OUTPUTS_HEADER = """# Outputs

Every result file of a results folder (`outdir`, and `outdir/models/<name>` per model of config key
`models`), generated from `mminfer/measurements.py` by `scripts/config_docs.py` (do not edit by
hand). Each JSON file is one measurement's record, a dataclass (temp.json and topp.json: a mapping)
whose fields are its keys, in order; a file of another version's keys is refused with a message.
From version to version every key keeps its meaning, with one exception: since 2026-12-06.2
anatomy.json holds no `fixed_step_s` and `fixed_step_runs_s`; the fixed cost is measured once, in
time.json, by its narrow side timed in the same rounds as the runs it bounds.

**Reading a timing.** Every timed figure is the median of independent rounds (an A/B timing's
interleaved rounds, a sweep's runs, a probe's runs) and carries an `Interval`: `median`, `low`,
`high`, `coverage`, `level`, `runs`. [`low`, `high`] are two of the runs (order statistics) and
hold the true median with chance `coverage` whatever the runs' distribution: 75 % for 3 runs'
[min, max], 96 % for 9 runs' [x(2), x(8)]. A comparison (faster, the same, within a limit, a share)
is decided only where `coverage` reaches `level`: above or below 1 (or the limit) when the whole
interval is; "the same" when a paired ratio's interval lies within 1 ± 5 %; else undecided, and
the report says the rounds cannot decide it. A timing that adds rounds while undecided looks after
each round; `level` is then the per-look level that keeps all its looks' chance of a wrong
decision within 10 % (Bonferroni; 97.5 % at 3 to 9 rounds). `contention` is measured during the
timed rounds: `cpu_share` (CPU time / (wall × threads)) under 0.75 or `cpu_pressure` (the
kernel's PSI "some") over 0.2 is `busy`, which both reports say first. `python -m
mminfer.report.check RESULTS` recomputes every comparison the reports write from the raw runs, and
every stored decision (`cache_faster`, `batch_faster`, each K's `faster`, each turn's
`carry_faster`, `penalty_costs`, each remedy's `saves`, `busy`) with the function that wrote it, and
exits 1 on any they do not support. sweep.json: each point's `with_cache_interval`,
`without_cache_interval`, `time_ratio_interval`, `ttft_interval`; serve.json: each batch's
`decode_step_interval`, `prefill_interval`; latency.json: `ttft_interval`, `tpot_interval` per path.
time.json's `speedup_interval` is of the per-round ratios and decides `cache_faster`. The
interval printed beside `speedup` itself (the ratio of the two medians) is not stored: the report
computes it from the runs (`mminfer.measures.time.decide.speedup_medians`): its ends are the
medians' interval ends divided across, and it holds the true ratio at least as often as both
medians' intervals hold theirs (coverage at least 1 − the two misses). `fixed_share_interval` is
of the per-round ratios narrow ÷ cached (`fixed_share_runs`).

**One quantity, one figure.** A figure the reports print is its JSON key's value: a median with
three significant digits (only an interval's ends are rounded, to the interval's precision), an
integer with every digit. The speedup is time.json's `speedup` wherever it is printed (the glance
row, `## KV 캐시`'s sentence and table), with that interval; whether the cache is
faster is said in words, from the paired rounds (`speedup_interval`). Each such figure is printed
through a filter that names its key, and the checker fails a folder where a printed figure is not
its key's value at that precision or one key is printed with two values. A sentence that says a
printed count grew, fell or stayed is checked too, from the signs of the counts' steps.
"""

OUTPUTS_FOOTER = """The reports' words live in their section's template,
`mminfer/report/sections/<section>/<name>.md.j2`: a macro per decision, called with the value its
measure's `mminfer/measures/<rule>/decide.py` gives from the runs (a join of two records' in the
section's `joins.py`).
"""


def rule_places() -> dict[str, tuple[str, str]]:
    """Each rule's file and script, read from rules/*.smk."""
    places = {}
    for path in sorted((REPO / "rules").glob("*.smk")):
        text = path.read_text(encoding="utf-8")
        for match in re.finditer(r"^rule (\w+):\n(.*?)(?=^rule |\Z)", text, re.M | re.S):
            script = re.search(r'script:\n\s+"\.\./(scripts/[\w.]+)"', match.group(2))
            places[match.group(1)] = (f"rules/{path.name}", script.group(1) if script else "")
    return places


def file_row(entry) -> str:
    """A measurement's row: its file, its name, its record's name and what the file holds."""
    _, record = measurements.declared(entry.record)
    return f"| `{entry.filename}` | `{entry.name}` | `{record}` | {entry.summary} |"


def keys_of(kind) -> str:
    """A record's keys, in order: a dataclass's fields, or a mapping's key and value."""
    if dataclasses.is_dataclass(kind):
        return ", ".join(f"`{field.name}`" for field in dataclasses.fields(kind))
    _, value = typing.get_args(kind)  # temp.json, topp.json: one key per temperature or p
    if dataclasses.is_dataclass(value):
        return f'exactly `{{"0.3": ..., ...}}`, each a `{value.__name__}`: {keys_of(value)}'
    return f'exactly `{{"0.5": n, ...}}`, each an `{value.__name__}`'


def function_name(reference: str) -> str:
    module, function = reference.split(":")
    return f"{module.removeprefix('mminfer.')}.{function}"


def render_outputs() -> str:
    places = rule_places()
    text = [OUTPUTS_HEADER, "## The task's files", ""]
    head = ["| file | measurement | record | what |", "| --- | --- | --- | --- |"]
    task = [entry for entry in measurements.MEASUREMENTS if entry.task]
    extra = [entry for entry in measurements.MEASUREMENTS if not entry.task]
    text += [*head, *(file_row(entry) for entry in task)]
    text.append(f"| `{measurements.TASK_SCRIPT}` | | | the task's script, runnable by hand |")
    text.append(
        f"| `{measurements.REPORT}` | | | the task's report: its files' sections; its rule reads "
        "those files and their pictures only, so it never waits for beyond.md's measurements |"
    )
    text += ["", "## Beyond the task", "", *head, *(file_row(entry) for entry in extra)]
    text.append(
        f"| `{measurements.BEYOND}` | | | the report of every other section; its rule reads "
        "every measurement's file |"
    )
    pictures = ", ".join(f"`{name}.png`" for name in measurements.pictures())
    text.append(f"| {pictures} | | | pictures, each drawn from its measurement's file |")
    text.append(
        f"| `{measurements.COMPARISON}` | | | with config key `models`: "
        f"{', '.join(measurements.compared())} of every model side by side |"
    )
    text += [
        "",
        "## Where each number is computed",
        "",
        "| file | rule (file) → script → function |",
    ]
    text += ["| --- | --- |"]
    for entry in measurements.MEASUREMENTS:
        rule_file, script = places[entry.rule]
        function = function_name(entry.measured_by)
        text.append(
            f"| `{entry.filename}` | `{entry.rule}` ({rule_file}) → {script} → `{function}` |"
        )
    report_file, report_script = places["report"]
    text.append(
        f"| `{measurements.REPORT}`, `{measurements.BEYOND}` | `report`, `beyond` "
        f"({report_file}) → {report_script} → "
        "`report.render_reports`, `mminfer/report/pages/report.md.j2` and `beyond.md.j2` |"
    )
    text += ["", "## The keys of each file", ""]
    text += ["| file | keys, in order |", "| --- | --- |"]
    for entry in measurements.MEASUREMENTS:
        text.append(f"| `{entry.filename}` | {keys_of(entry.record)} |")
    text += ["", OUTPUTS_FOOTER]
    return "\n".join(text)


def render_readme_table() -> str:
    """The README's table of files: a row per rule that writes measurements (one model load), its
    files and their summaries, then the files that are no measurement's."""
    lines = ["| file | what |", "| --- | --- |"]
    for rule in measurements.rules():
        entries = [entry for entry in measurements.MEASUREMENTS if entry.rule == rule]
        files = ", ".join(f"`{entry.filename}`" for entry in entries)
        lines.append(f"| {files} | {'; '.join(entry.summary for entry in entries)} |")
    pictures = ", ".join(f"`{name}.png`" for name in measurements.pictures())
    lines += [
        f"| `{measurements.TASK_SCRIPT}` | the script that wrote same.json and count.json "
        f"(`python {measurements.TASK_SCRIPT} --help`) |",
        f"| {pictures} | pictures, each drawn from its measurement's file |",
        f"| `{measurements.REPORT}`, `{measurements.BEYOND}` | the task's report (`## 한눈에`, "
        "`## 실행 정보`, `## KV 캐시`, `## 온도`, `## top-p`) and the report beyond it (a section "
        "per other measurement); each section its lesson first, the method folded |",
        f"| `{measurements.COMPARISON}` | with config key `models`: "
        f"{', '.join(measurements.compared())} of every model side by side |",
        "| `logs/`, `benchmarks/` | one log per rule; Snakemake's benchmark file (seconds, "
        "memory) of each job |",
    ]
    return "\n".join(lines)


def with_readme_table(readme: str) -> str:
    """The README with its table of files, between README_START and README_END, regenerated."""
    start = readme.index(README_START) + len(README_START)
    end = readme.index(README_END)
    return f"{readme[:start]}\n{render_readme_table()}\n{readme[end:]}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="exit 1 when a page is stale")
    args = parser.parse_args()
    pages = {
        PAGE: render(read_schema()),
        OUTPUTS_PAGE: render_outputs(),
        README: with_readme_table(README.read_text(encoding="utf-8")),
    }
    for path, page in pages.items():
        if args.check:
            if path.read_text(encoding="utf-8") != page:
                sys.exit(f"{path} is not its source's: run python scripts/config_docs.py")
        else:
            path.write_text(page, encoding="utf-8")


if __name__ == "__main__":
    main()
