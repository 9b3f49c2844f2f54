"""Rules of rules/report.smk: report.md from one results folder, comparison.md across models."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from mminfer.compare import comparison_row, render_comparison
from mminfer.io import write_text_atomic
from mminfer.outputs import EXTRA_JSON, PLOTS, TASK_JSON
from mminfer.records import read_result
from mminfer.report import render_report

log = logging.getLogger("mminfer")


def relative_to(path, folder: Path) -> str:
    return Path(os.path.relpath(Path(path).resolve(), folder.resolve())).as_posix()


def report_job(results: dict, template, out) -> str:
    """report.md from the result files of one results folder.

    ``results`` maps the names of mminfer.outputs.report_inputs to their paths; the PNGs and
    cache.py are linked relatively.
    """
    folder = Path(out).parent
    read = {name: read_result(results[name]) for name in {**TASK_JSON, **EXTRA_JSON}}
    pictures = {name: relative_to(results[f"{name}_png"], folder) for name in PLOTS}
    text = render_report(
        same=read["same"],
        count=read["counts"],
        timing=read["time"],
        kv=read["kvbytes"],
        temp=read["temp"],
        topp=read["topp"],
        topp_detail=read["topp_detail"],
        sweep=read["sweep"],
        capacity=read["capacity"],
        sampler=read["sampler"],
        serve=read["serve"],
        pictures=pictures,
        cache_script=relative_to(results["cache_script"], folder),
        template=template,
    )
    write_text_atomic(out, text)
    log.info("wrote %s (%d lines)", out, text.count("\n"))
    return text


def compare_job(names: list[str], time, kvbytes, temp, topp, capacity, out) -> str:
    """comparison.md: one row per model.

    Each input is the list of that file over the models, in the order of ``names``.
    """
    rows = []
    for index, name in enumerate(names):
        row = comparison_row(
            name,
            read_result(time[index]),
            read_result(kvbytes[index]),
            read_result(temp[index]),
            read_result(topp[index]),
            read_result(capacity[index]),
        )
        rows.append(row)
    text = render_comparison(rows)
    write_text_atomic(out, text)
    log.info("compared %d models in %s", len(names), out)
    return text
