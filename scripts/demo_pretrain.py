"""Rule demo_pretrain: pretrain the demo MiniMind on the corpus."""

from mminfer.demo.jobs import demo_pretrain_job
from mminfer.workflow.script import rule_only, run_rule

if "snakemake" in globals():
    run_rule(snakemake, demo_pretrain_job)
elif __name__ == "__main__":
    rule_only("demo_pretrain", "report.md")
