"""Step 7: report.md from the JSON files of the other rules."""

from mminfer.report import report_job
from mminfer.script import run_job

if "snakemake" in globals():
    run_job(snakemake.log[0], report_job, dict(snakemake.input.items()), snakemake.output[0])
