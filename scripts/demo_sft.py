"""Rule demo_sft: fine-tune the pretrained demo MiniMind on the SFT conversations."""

from mminfer.demo.jobs import demo_sft_job
from mminfer.workflow.script import rule_only, run_rule

if "snakemake" in globals():
    run_rule(snakemake, demo_sft_job)
elif __name__ == "__main__":
    rule_only("demo_sft", "report.md")
