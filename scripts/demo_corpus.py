"""Rule demo_corpus: the synthetic Korean corpus (pretrain train/val JSONL, SFT JSONL, facts)."""

from pathlib import Path

from mminfer.jobs.demo import demo_corpus_job
from mminfer.script import job_log

if "snakemake" in globals():
    with job_log(snakemake.log[0]):
        demo_corpus_job(
            corpus=snakemake.params.corpus,
            out_dir=Path(snakemake.output.train).parent,
        )
