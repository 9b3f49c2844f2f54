"""Step 4: the KV cache's bytes after feeding random tokens, against the formula -> kvbytes.json."""

from mminfer.jobs import kvbytes_job, model_spec_from
from mminfer.script import run_job

if "snakemake" in globals():
    spec = model_spec_from(snakemake.params.model, snakemake.input.pretrain, snakemake.threads)
    run_job(snakemake.log[0], kvbytes_job, spec,
            snakemake.params.tokens, snakemake.params.seed, snakemake.output[0])
