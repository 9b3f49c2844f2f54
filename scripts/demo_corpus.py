"""Rule demo_corpus: the synthetic Korean corpus (pretrain train/val JSONL, SFT JSONL, facts)."""

from pathlib import Path

from mminfer.demo.jobs import demo_corpus_job
from mminfer.workflow.script import rule_only, run_rule

if "snakemake" in globals():
    run_rule(snakemake, demo_corpus_job, out_dir=lambda rule: Path(rule.output.train).parent)
elif __name__ == "__main__":
    rule_only("demo_corpus", "report.md")
