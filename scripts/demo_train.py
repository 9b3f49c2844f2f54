"""Rules demo_pretrain and demo_sft: train the demo MiniMind (the rule's inputs say which stage)."""

from pathlib import Path

from mminfer.demo.build import pretrain_job, sft_job
from mminfer.script import job_log

if "snakemake" in globals():
    tokenizer_dir = Path(snakemake.input.tokenizer[0]).parent
    with job_log(snakemake.log[0]):
        if "pretrain" in snakemake.input.keys():
            sft_job(
                snakemake.input.pretrain,
                snakemake.input.sft,
                tokenizer_dir,
                snakemake.params.train,
                snakemake.params.max_positions,
                snakemake.threads,
                snakemake.output[0],
            )
        else:
            pretrain_job(
                snakemake.input.train,
                tokenizer_dir,
                snakemake.params.train,
                snakemake.params.max_positions,
                snakemake.threads,
                snakemake.output[0],
            )
