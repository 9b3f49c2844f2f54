r"""Step 5: distinct answers of the SFT model at each temperature -> temp.json.

Run by the workflow's `temp` rule, or by hand:

    python scripts/temperature.py --sft /opt/mm/ref/sft.pth --tokenizer /opt/minimind/model \
        --out temp.json
"""

from mminfer.jobs.sampling import temp_job
from mminfer.loading import ModelSource, ModelSpec
from mminfer.script import SFT, TOKENIZER, cli, hand_model, job_log, tokenizer_folder

if "snakemake" in globals():
    with job_log(snakemake.log[0]):
        temp_job(
            model=ModelSource(
                checkpoint=snakemake.input.sft,
                spec=ModelSpec(**snakemake.params.model),
                threads=snakemake.threads,
                input_key="sft",
                lora=snakemake.input.sft_lora or None,  # none: an empty input
            ),
            tokenizer=tokenizer_folder(snakemake.input.tokenizer),
            question=snakemake.params.question,
            temperatures=snakemake.params.temperatures,
            samples=snakemake.params.samples,
            new_tokens=snakemake.params.new_tokens,
            seed=snakemake.params.seed,
            chatml_fallback=snakemake.params.chatml_fallback,
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
        temp_job(
            model=hand_model(args, args.sft, input_key="sft", lora=args.sft_lora),
            tokenizer=args.tokenizer,
            question=args.question,
            temperatures=args.temperatures,
            samples=args.samples,
            new_tokens=args.new_tokens,
            seed=args.seed,
            chatml_fallback=args.chatml_fallback,
            out=args.out,
        )
