"""Rule demo_pretrain: pretrain the demo MiniMind on the corpus."""

from mminfer.demo.jobs import demo_pretrain_job
from mminfer.workflow.script import job_log, rule_only, tokenizer_folder

if "snakemake" in globals():
    with job_log(snakemake.log[0]):
        demo_pretrain_job(
            corpus=snakemake.input.corpus,
            tokenizer=tokenizer_folder(snakemake.input.tokenizer),
            train=snakemake.params.train,
            max_positions=snakemake.params.max_positions,
            threads=snakemake.threads,
            out=snakemake.output[0],
        )
elif __name__ == "__main__":
    rule_only("demo_pretrain", "report.md")
