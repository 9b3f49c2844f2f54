"""What fits on a card: KV bytes per token per dtype, users per memory size and context -> capacity.json."""

from mminfer.jobs import capacity_job
from mminfer.script import job_log, rule_arguments

if "snakemake" in globals():
    with job_log(snakemake.log[0]):
        capacity_job(**rule_arguments(snakemake), out=snakemake.output[0])
