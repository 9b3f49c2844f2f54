"""Cost against generation length: fed tokens and time with and without the cache -> sweep.json."""

from pathlib import Path

from mminfer.jobs import model_spec_from, sweep_job
from mminfer.script import run_job

if "snakemake" in globals():
    spec = model_spec_from(snakemake.params.model, snakemake.input.pretrain, snakemake.params.threads or snakemake.threads)
    run_job(snakemake.log[0], sweep_job, spec,
            Path(snakemake.input.tokenizer[0]).parent, snakemake.input.val_data, snakemake.params.docs,
            snakemake.params.prompt_tokens, snakemake.params.lengths, snakemake.params.warmup,
            snakemake.params.runs, snakemake.output[0])
