"""Step 7: report.md or beyond.md (the rule's name says which) from the result files it reads.

Reads each measurement's file among the rule's inputs back as its record (mminfer.measurements),
links the pictures and the task's cache.py relative to the report, renders it from those records
only, then writes it (atomically).
"""

import logging
import os
from pathlib import Path

from mminfer.io import write_text_atomic
from mminfer.measurements import (
    MEASUREMENTS,
    REPORTS,
    key,
    picture_file,
    pictures,
    report_of_file,
)
from mminfer.records import read_record
from mminfer.report.decided import DecisionLog
from mminfer.report.render import render_reports
from mminfer.workflow.script import job_log, rule_only


def relative_to(path, folder: Path) -> str:
    return Path(os.path.relpath(Path(path).resolve(), folder.resolve())).as_posix()


def report(files: dict, report_out: str, cache_script: str | None = None) -> None:
    """Read the records among ``files`` (the rule's inputs), render the report ``report_out``
    names from them, write it."""
    out = Path(report_out)
    folder = out.parent
    which = report_of_file(out.name)
    records = {
        entry.name: read_record(files[key(entry.name)], entry.record)
        for entry in MEASUREMENTS
        if key(entry.name) in files
    }
    linked = {name: picture_file(name) for name in pictures()}  # each beside the report
    decisions = DecisionLog()
    texts = render_reports(
        records,
        pictures=linked,
        cache_script=None if cache_script is None else relative_to(cache_script, folder),
        decisions=decisions,
        results=str(folder),
        reports=(which,),
    )
    write_text_atomic(report_out, texts[REPORTS[which]])
    logging.getLogger("mminfer").info("wrote %s; %s", report_out, decisions.summary())


if "snakemake" in globals():
    with job_log(snakemake.log[0]):
        report(
            files=dict(snakemake.input.items()),
            report_out=snakemake.output.report,
            cache_script=getattr(snakemake.input, "cache_script", None),
        )
elif __name__ == "__main__":
    rule_only("report", "report.md")
