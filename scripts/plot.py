"""A PNG drawn from the JSON beside it (sweep.png, temp.png, topp.png)."""

from mminfer.jobs.plots import plot_job
from mminfer.script import job_log

if "snakemake" in globals():
    with job_log(snakemake.log[0]):
        plot_job(
            kind=snakemake.wildcards.plot,
            source=snakemake.input.source,
            out=snakemake.output[0],
        )
