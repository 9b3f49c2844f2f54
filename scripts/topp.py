"""Step 6: top-p survivors after [bos] + prefix -> topp.json (and topp_detail.json).

Run by the workflow's `topp` rule, or by hand:

    python scripts/topp.py --pretrain /opt/mm/ref/pretrain.pth --tokenizer /opt/minimind/model \
        --out topp.json --detail topp_detail.json
"""

import argparse
from pathlib import Path

from mminfer.jobs import model_spec_from, topp_job
from mminfer.script import add_model_arguments, model_params_from_args, run_job


def parse_cli():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pretrain", required=True, help="pretrained checkpoint (.pth state_dict or model folder)")
    parser.add_argument("--tokenizer", required=True, help="folder with tokenizer.json and tokenizer_config.json")
    parser.add_argument("--out", required=True, help="topp.json to write")
    parser.add_argument("--detail", required=True, help="topp_detail.json to write")
    parser.add_argument("--prefix", default="민수는", help="the open position (default 민수는)")
    parser.add_argument("--sharp-prefix", default="가람 마을의 특산물은", help="the sharp position")
    parser.add_argument("--ps", type=float, nargs="+", default=[0.5, 0.9, 0.99], help="values of p")
    add_model_arguments(parser)
    return parser.parse_args()


if "snakemake" in globals():
    spec = model_spec_from(snakemake.params.model, snakemake.input.pretrain, snakemake.threads)
    run_job(snakemake.log[0], topp_job, spec, Path(snakemake.input.tokenizer[0]).parent, snakemake.params.prefix,
            snakemake.params.sharp_prefix, snakemake.params.ps, snakemake.output.topp, snakemake.output.detail)
elif __name__ == "__main__":
    args = parse_cli()
    spec = model_spec_from(model_params_from_args(args), args.pretrain, args.threads)
    run_job(args.log, topp_job, spec, args.tokenizer, args.prefix, args.sharp_prefix, args.ps, args.out, args.detail)
