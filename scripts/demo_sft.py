"""Rule demo_sft: fine-tune the pretrained demo MiniMind on the SFT conversations."""

from mminfer.demo.jobs import demo_sft_job
from mminfer.workflow.script import job_log, rule_only, tokenizer_folder

if "snakemake" in globals():
    with job_log(snakemake.log[0]):
        demo_sft_job(
            pretrain=snakemake.input.pretrain,
            sft=snakemake.input.sft,
            tokenizer=tokenizer_folder(snakemake.input.tokenizer),
            train=snakemake.params.train,
            max_positions=snakemake.params.max_positions,
            threads=snakemake.threads,
            out=snakemake.output[0],
        )
elif __name__ == "__main__":
    rule_only("demo_sft", "report.md")
