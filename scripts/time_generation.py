"""Step 3: the time of greedy generation with and without the KV cache -> time.json.

Median of the timed runs after the warm-up runs, for each method; speedup = without / with.
(Named time_generation.py so that it does not shadow the standard library's `time`.)
"""

from pathlib import Path

from mminfer.jobs import model_spec_from, time_job
from mminfer.script import run_job

if "snakemake" in globals():
    spec = model_spec_from(snakemake.params.model, snakemake.input.pretrain, snakemake.threads)
    run_job(snakemake.log[0], time_job, spec,
            Path(snakemake.input.tokenizer[0]).parent, snakemake.input.val_data, snakemake.params.docs,
            snakemake.params.prompt_tokens, snakemake.params.new_tokens, snakemake.params.warmup,
            snakemake.params.runs, snakemake.output[0])
