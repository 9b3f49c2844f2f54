"""Step 5: distinct answers of the SFT model at each temperature -> temp.json.

Run by the workflow's `temp` rule, or by hand:

    python scripts/temperature.py --sft /opt/mm/ref/sft.pth --tokenizer /opt/minimind/model --out temp.json
"""

import argparse
from pathlib import Path

from mminfer.jobs import model_spec_from, temp_job
from mminfer.script import add_model_arguments, model_params_from_args, run_job


def parse_cli():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sft", required=True, help="SFT checkpoint (.pth state_dict or model folder)")
    parser.add_argument("--tokenizer", required=True, help="folder with tokenizer.json and tokenizer_config.json")
    parser.add_argument("--out", required=True, help="temp.json to write")
    parser.add_argument("--question", default="가람 마을의 특산물은 무엇인가요?", help="the user question")
    parser.add_argument("--temperatures", type=float, nargs="+", default=[0.3, 1.0, 1.5])
    parser.add_argument("--samples", type=int, default=30, help="answers per temperature (default 30)")
    parser.add_argument("--new-tokens", type=int, default=24, help="max_new_tokens per answer (default 24)")
    parser.add_argument("--seed", type=int, default=0, help="torch.manual_seed before each temperature")
    add_model_arguments(parser)
    return parser.parse_args()


if "snakemake" in globals():
    spec = model_spec_from(snakemake.params.model, snakemake.input.sft, snakemake.threads)
    run_job(snakemake.log[0], temp_job, spec, Path(snakemake.input.tokenizer[0]).parent, snakemake.params.question,
            snakemake.params.temperatures, snakemake.params.samples, snakemake.params.new_tokens,
            snakemake.params.seed, snakemake.output[0])
elif __name__ == "__main__":
    args = parse_cli()
    spec = model_spec_from(model_params_from_args(args), args.sft, args.threads)
    run_job(args.log, temp_job, spec, args.tokenizer, args.question, args.temperatures, args.samples,
            args.new_tokens, args.seed, args.out)
