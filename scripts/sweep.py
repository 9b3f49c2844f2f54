"""Cost against generation length: the steps of clocked generations -> sweep.json."""

from mminfer.jobs.scaling import sweep_job
from mminfer.loading import ModelSource, ModelSpec
from mminfer.records import PretrainPrompt
from mminfer.script import job_log, rule_only, tokenizer_folder
from mminfer.sweep import SweepSettings

if "snakemake" in globals():
    with job_log(snakemake.log[0]):
        sweep_job(
            model=ModelSource(
                checkpoint=snakemake.input.pretrain,
                spec=ModelSpec(**snakemake.params.model),
                threads=snakemake.params.threads or snakemake.threads,  # time.threads, else all
            ),
            prompt=PretrainPrompt(
                tokenizer=tokenizer_folder(snakemake.input.tokenizer),
                val_data=snakemake.input.val_data,
                docs=snakemake.params.docs,
                prompt_tokens=snakemake.params.prompt_tokens,
            ),
            settings=SweepSettings(**snakemake.params.sweep),
            out=snakemake.output[0],
        )
elif __name__ == "__main__":
    rule_only("sweep", "sweep.json")
