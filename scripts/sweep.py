"""Cost against generation length: every step of one clocked generation per method -> sweep.json."""

from mminfer.jobs import sweep_job
from mminfer.script import job_log, rule_arguments

if "snakemake" in globals():
    with job_log(snakemake.log[0]):
        sweep_job(**rule_arguments(snakemake), out=snakemake.output[0])
