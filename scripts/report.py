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
from mminfer.workflow.script import job_log, rule_only


def relative_to(path, folder: Path) -> str:
    return Path(os.path.relpath(Path(path).resolve(), folder.resolve())).as_posix()


if "snakemake" in globals():
    with job_log(snakemake.log[0]):
        folder = Path(snakemake.output[0]).parent
        records = {}
        for entry in MEASUREMENTS:
            records[entry.name] = read_record(snakemake.input[key(entry.name)], entry.record)
        linked = {}
        for picture in pictures():
            linked[picture] = relative_to(snakemake.input[f"{picture}_png"], folder)
        claims = ClaimLog()
        text = render_report(
            records,
            pictures=linked,
            cache_script=relative_to(snakemake.input.cache_script, folder),
            template=snakemake.input.template,
            claims=claims,
        )
        write_text_atomic(snakemake.output[0], text)
        logging.getLogger("mminfer").info(
            "wrote %s (%d lines)", snakemake.output[0], text.count("\n")
        )
        logging.getLogger("mminfer").info("%s", claims.summary())
elif __name__ == "__main__":
    rule_only("report", "report.md")
