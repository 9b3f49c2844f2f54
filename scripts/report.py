"""Step 7: report.md from the result files of the other rules.

Reads each measurement's file back as its record (mminfer.measurements), links the pictures and
the task's cache.py relative to the report, renders and writes it.
"""

import logging
import os
from pathlib import Path

from mminfer.io import write_text_atomic
from mminfer.measurements import MEASUREMENTS, key, pictures
from mminfer.records import read_record
from mminfer.records.claims import ClaimLog
from mminfer.report.render import render_report
from mminfer.workflow.script import rule_only, run_rule


def relative_to(path, folder: Path) -> str:
    return Path(os.path.relpath(Path(path).resolve(), folder.resolve())).as_posix()


def report(files, cache_script, template, out):
    """Read every measurement's record from ``files`` (the rule's inputs), render, write ``out``."""
    folder = Path(out).parent
    records = {
        entry.name: read_record(files[key(entry.name)], entry.record) for entry in MEASUREMENTS
    }
    linked = {picture: relative_to(files[f"{picture}_png"], folder) for picture in pictures()}
    claims = ClaimLog()
    text = render_report(
        records,
        pictures=linked,
        cache_script=relative_to(cache_script, folder),
        template=template,
        claims=claims,
    )
    write_text_atomic(out, text)
    logging.getLogger("mminfer").info("wrote %s (%d lines)", out, text.count("\n"))
    logging.getLogger("mminfer").info("%s", claims.summary())


if "snakemake" in globals():
    run_rule(snakemake, report, files=lambda rule: rule.input)
elif __name__ == "__main__":
    rule_only("report", "report.md")
