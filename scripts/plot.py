"""A PNG drawn from the JSON beside it (sweep.png, temp.png, topp.png)."""

from mminfer.plots import plot_job
from mminfer.script import job_log

if "snakemake" in globals():
    with job_log(snakemake.log[0]):
        plot_job(snakemake.wildcards.plot, snakemake.input[0], snakemake.output[0])
