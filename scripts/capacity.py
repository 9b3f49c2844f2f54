"""What fits on a card: KV bytes per token per dtype, sequences per memory size -> capacity.json."""

from mminfer.jobs.scaling import capacity_job
from mminfer.loading import ModelSource, ModelSpec
from mminfer.script import job_log, rule_only

if "snakemake" in globals():
    with job_log(snakemake.log[0]):
        capacity_job(
            model=ModelSource(
                checkpoint=snakemake.input.pretrain,
                spec=ModelSpec(**snakemake.params.model),
                threads=snakemake.threads,
            ),
            memory_gib=snakemake.params.memory_gib,
            contexts=snakemake.params.contexts,
            batch=snakemake.params.batch,
            batch_context=snakemake.params.batch_context,
            out=snakemake.output[0],
        )
elif __name__ == "__main__":
    rule_only("capacity", "capacity.json")
