"""Step 5: distinct answers of the SFT model at each temperature -> temp.json."""

from pathlib import Path

from mminfer.jobs import model_spec_from, temp_job
from mminfer.script import run_job

if "snakemake" in globals():
    spec = model_spec_from(snakemake.params.model, snakemake.input.sft, snakemake.threads)
    run_job(snakemake.log[0], temp_job, spec,
            Path(snakemake.input.tokenizer[0]).parent, snakemake.params.question, snakemake.params.temperatures,
            snakemake.params.samples, snakemake.params.new_tokens, snakemake.params.seed, snakemake.output[0])
