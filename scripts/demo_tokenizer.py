"""Rule demo_tokenizer: byte-level BPE trained on the demo corpus (tokenizer.json + config)."""

from pathlib import Path

from mminfer.demo.build import tokenizer_job
from mminfer.script import job_log

if "snakemake" in globals():
    with job_log(snakemake.log[0]):
        tokenizer_job(
            snakemake.input.train,
            snakemake.input.sft,
            snakemake.params.vocab_size,
            Path(snakemake.output[0]).parent,
        )
