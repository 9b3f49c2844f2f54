"""Step 7: report.md and beyond.md from the result files of the other rules.

Reads each measurement's file back as its record (mminfer.measurements), links the pictures and
the task's cache.py relative to the reports, renders both, then writes each (atomically).
"""

import logging
import os
from pathlib import Path

from mminfer.io import write_text_atomic
from mminfer.measurements import MEASUREMENTS, key, pictures
from mminfer.records import read_record
from mminfer.records.claims import ClaimLog
from mminfer.report.render import render_reports
from mminfer.workflow.script import rule_only, run_rule


def relative_to(path, folder: Path) -> str:
    return Path(os.path.relpath(Path(path).resolve(), folder.resolve())).as_posix()


def report(files, cache_script, template, report_out, beyond_out):
    """Read every measurement's record from ``files`` (the rule's inputs), render, write both."""
    folder = Path(report_out).parent
    records = {
        entry.name: read_record(files[key(entry.name)], entry.record) for entry in MEASUREMENTS
    }
    linked = {picture: relative_to(files[f"{picture}_png"], folder) for picture in pictures()}
    claims = ClaimLog()
    texts = render_reports(
        records,
        pictures=linked,
        cache_script=relative_to(cache_script, folder),
        folder=Path(template).parent,
        claims=claims,
    )
    for out, name in ((report_out, "report.md"), (beyond_out, "beyond.md")):
        write_text_atomic(out, texts[name])
    logging.getLogger("mminfer").info("wrote %s, %s; %s", report_out, beyond_out, claims.summary())


if "snakemake" in globals():
    run_rule(snakemake, report, files=lambda rule: rule.input)
elif __name__ == "__main__":
    rule_only("report", "report.md")
