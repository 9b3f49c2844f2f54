"""Rule demo_tokenizer: byte-level BPE trained on the demo corpus (tokenizer.json + config)."""

from mminfer.demo.jobs import demo_tokenizer_job
from mminfer.workflow.script import job_log, rule_only, tokenizer_folder

if "snakemake" in globals():
    with job_log(snakemake.log[0]):
        demo_tokenizer_job(
            train=snakemake.input.train,
            sft=snakemake.input.sft,
            vocab_size=snakemake.params.vocab_size,
            out_dir=tokenizer_folder(snakemake.output),
        )
elif __name__ == "__main__":
    rule_only("demo_tokenizer", "report.md")
