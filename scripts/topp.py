r"""Step 6: top-p survivors after [bos] + prefix -> topp.json (and topp_detail.json).

Run by the workflow's `topp` rule, or by hand:

    python scripts/topp.py --pretrain /opt/mm/ref/pretrain.pth --tokenizer /opt/minimind/model \
        --out topp.json --detail topp_detail.json
"""

from mminfer.jobs.sampling import topp_job
from mminfer.loading import ModelSource, ModelSpec
from mminfer.script import PRETRAIN, TOKENIZER, cli, hand_model, job_log, tokenizer_folder

if "snakemake" in globals():
    with job_log(snakemake.log[0]):
        topp_job(
            model=ModelSource(
                checkpoint=snakemake.input.pretrain,
                spec=ModelSpec(**snakemake.params.model),
                threads=snakemake.threads,
            ),
            tokenizer=tokenizer_folder(snakemake.input.tokenizer),
            prefix=snakemake.params.prefix,
            sharp_prefix=snakemake.params.sharp_prefix,
            ps=snakemake.params.ps,
            topp_out=snakemake.output.topp,
            detail_out=snakemake.output.topp_detail,
        )
elif __name__ == "__main__":
    args = cli(
        __doc__,
        paths=[
            PRETRAIN,
            TOKENIZER,
            ("--out", "topp.json to write"),
            ("--detail", "topp_detail.json to write"),
        ],
        keys=["topp.prefix", "topp.sharp_prefix", "topp.ps"],
    )
    with job_log(args.log):
        topp_job(
            model=hand_model(args, args.pretrain),
            tokenizer=args.tokenizer,
            prefix=args.prefix,
            sharp_prefix=args.sharp_prefix,
            ps=args.ps,
            topp_out=args.out,
            detail_out=args.detail,
        )
