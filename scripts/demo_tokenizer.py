"""Rule demo_tokenizer: byte-level BPE trained on the demo corpus (tokenizer.json + config)."""

from mminfer.demo.jobs import demo_tokenizer_job
from mminfer.workflow.script import rule_only, run_rule, tokenizer_folder

if "snakemake" in globals():
    run_rule(snakemake, demo_tokenizer_job, out_dir=lambda rule: tokenizer_folder(rule.output))
elif __name__ == "__main__":
    rule_only("demo_tokenizer", "report.md")
