"""Step 7: report.md from the JSON files of the other rules."""

from mminfer.report import report_job
from mminfer.script import job_log

if "snakemake" in globals():
    with job_log(snakemake.log[0]):
        report_job(dict(snakemake.input.items()), snakemake.output[0])
