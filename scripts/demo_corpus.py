"""Rule demo_corpus: the synthetic Korean corpus (pretrain train/val JSONL, SFT JSONL, facts)."""

from pathlib import Path

from mminfer.demo.build import corpus_job
from mminfer.script import job_log

if "snakemake" in globals():
    with job_log(snakemake.log[0]):
        corpus_job(snakemake.params.corpus, Path(snakemake.output.train).parent)
