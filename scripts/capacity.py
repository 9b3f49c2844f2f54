"""What fits on a card: KV bytes per token per dtype, users per memory size and context -> capacity.json."""

from mminfer.jobs import capacity_job, model_spec_from
from mminfer.script import run_job

if "snakemake" in globals():
    spec = model_spec_from(snakemake.params.model, snakemake.input.pretrain, snakemake.threads)
    run_job(snakemake.log[0], capacity_job, spec,
            snakemake.params.memory_gib, snakemake.params.contexts, snakemake.params.batch,
            snakemake.params.batch_context, snakemake.output[0])
