"""What fits on a card: KV bytes per token per dtype, users per memory size and context -> capacity.json."""

from mminfer.jobs import capacity_job
from mminfer.script import job_log, rule_params

if "snakemake" in globals():
    with job_log(snakemake.log[0]):
        capacity_job(**rule_params(snakemake), pretrain=snakemake.input.pretrain, threads=snakemake.threads,
                     out=snakemake.output[0])
