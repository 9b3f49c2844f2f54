"""Step 7: report.md from the result files of the other rules."""

from mminfer.jobs.report import report_job
from mminfer.outputs import report_inputs
from mminfer.script import job_log, rule_only

if "snakemake" in globals():
    with job_log(snakemake.log[0]):
        report_job(
            results={name: snakemake.input[name] for name in report_inputs()},
            template=snakemake.input.template,
            out=snakemake.output[0],
        )
elif __name__ == "__main__":
    rule_only("report", "report.md")
