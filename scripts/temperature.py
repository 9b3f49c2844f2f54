r"""Step 5: distinct answers of the SFT model at each temperature -> temp.json.

Run by the workflow's `temp` rule, or by hand:

    python scripts/temperature.py --sft /opt/mm/ref/sft.pth --tokenizer /opt/minimind/model \
        --out temp.json
"""

from mminfer.jobs.sampling import temp_job
from mminfer.loading import ModelSpec
from mminfer.script import SFT, TOKENIZER, cli, hand_arguments, job_log, tokenizer_folder

if "snakemake" in globals():
    with job_log(snakemake.log[0]):
        temp_job(
            sft=snakemake.input.sft,
            sft_lora=snakemake.input.sft_lora or None,  # none: an empty input
            tokenizer=tokenizer_folder(snakemake.input.tokenizer),
            question=snakemake.params.question,
            temperatures=snakemake.params.temperatures,
            samples=snakemake.params.samples,
            new_tokens=snakemake.params.new_tokens,
            seed=snakemake.params.seed,
            chatml_fallback=snakemake.params.chatml_fallback,
            model=ModelSpec(**snakemake.params.model),
            threads=snakemake.threads,
            out=snakemake.output[0],
        )
elif __name__ == "__main__":
    args = cli(
        __doc__,
        paths=[SFT, TOKENIZER, ("--out", "temp.json to write")],
        keys=[
            "sft_lora",
            "temp.question",
            "temp.temperatures",
            "temp.samples",
            "temp.new_tokens",
            "temp.seed",
            "temp.chatml_fallback",
        ],
    )
    with job_log(args.log):
        temp_job(**hand_arguments(args))
