"""Cost against generation length: the steps of clocked generations -> sweep.json."""

from mminfer.jobs.scaling import sweep_job
from mminfer.loading import ModelSpec
from mminfer.script import job_log, rule_only, tokenizer_folder

if "snakemake" in globals():
    with job_log(snakemake.log[0]):
        sweep_job(
            pretrain=snakemake.input.pretrain,
            tokenizer=tokenizer_folder(snakemake.input.tokenizer),
            val_data=snakemake.input.val_data,
            docs=snakemake.params.docs,
            prompt_tokens=snakemake.params.prompt_tokens,
            lengths=snakemake.params.lengths,
            warmup=snakemake.params.warmup,
            runs=snakemake.params.runs,
            all_steps_up_to=snakemake.params.all_steps_up_to,
            spread_steps=snakemake.params.spread_steps,
            model=ModelSpec(**snakemake.params.model),
            threads=snakemake.params.threads or snakemake.threads,  # time.threads, else the rule's
            out=snakemake.output[0],
        )
elif __name__ == "__main__":
    rule_only("sweep", "sweep.json")
