"""A PNG drawn from the JSON beside it (sweep.png, temp.png, topp.png, serve.png)."""

from mminfer.report.plot_job import plot_job
from mminfer.workflow.script import job_log, rule_only

if "snakemake" in globals():
    with job_log(snakemake.log[0]):
        plot_job(
            kind=snakemake.wildcards.plot,
            source=snakemake.input.source,
            out=snakemake.output[0],
        )
elif __name__ == "__main__":
    rule_only("plot", "sweep.png")
