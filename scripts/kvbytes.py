"""Step 4: the KV cache's bytes after feeding random tokens, against the formula -> kvbytes.json.

Run by the workflow's `kvbytes` rule, or by hand:

    python scripts/kvbytes.py --pretrain /opt/mm/ref/pretrain.pth --out kvbytes.json
"""

import argparse

from mminfer.jobs import kvbytes_job, model_spec_from
from mminfer.script import add_model_arguments, model_params_from_args, run_job


def parse_cli():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pretrain", required=True, help="pretrained checkpoint (.pth state_dict or model folder)")
    parser.add_argument("--out", required=True, help="the JSON file to write")
    parser.add_argument("--tokens", type=int, default=100, help="random tokens fed with use_cache=True (default 100)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random tokens (default 0)")
    add_model_arguments(parser)
    return parser.parse_args()


if "snakemake" in globals():
    spec = model_spec_from(snakemake.params.model, snakemake.input.pretrain, snakemake.threads)
    run_job(snakemake.log[0], kvbytes_job, spec, snakemake.params.tokens, snakemake.params.seed, snakemake.output[0])
elif __name__ == "__main__":
    args = parse_cli()
    spec = model_spec_from(model_params_from_args(args), args.pretrain, args.threads)
    run_job(args.log, kvbytes_job, spec, args.tokens, args.seed, args.out)
