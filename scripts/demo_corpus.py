"""Rule demo_corpus: the synthetic Korean corpus (pretrain train/val JSONL, SFT JSONL, facts)."""

from pathlib import Path

from mminfer.demo.jobs import demo_corpus_job
from mminfer.workflow.script import job_log, rule_only

if "snakemake" in globals():
    with job_log(snakemake.log[0]):
        demo_corpus_job(
            corpus=snakemake.params.corpus,
            out_dir=Path(snakemake.output.train).parent,
        )
elif __name__ == "__main__":
    rule_only("demo_corpus", "report.md")
