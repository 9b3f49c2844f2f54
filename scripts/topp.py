r"""Step 6: top-p survivors after [bos] + prefix -> topp.json (and topp_detail.json).

Run by the workflow's `topp` rule, or by hand:

    python scripts/topp.py --pretrain /opt/mm/ref/pretrain.pth --tokenizer /opt/minimind/model \
        --out topp.json --detail topp_detail.json
"""

from mminfer.jobs.sampling import topp_job
from mminfer.loading import ModelSpec
from mminfer.script import PRETRAIN, TOKENIZER, cli, hand_arguments, job_log, tokenizer_folder

if "snakemake" in globals():
    with job_log(snakemake.log[0]):
        topp_job(
            pretrain=snakemake.input.pretrain,
            tokenizer=tokenizer_folder(snakemake.input.tokenizer),
            prefix=snakemake.params.prefix,
            sharp_prefix=snakemake.params.sharp_prefix,
            ps=snakemake.params.ps,
            model=ModelSpec(**snakemake.params.model),
            threads=snakemake.threads,
            topp_out=snakemake.output.topp,
            detail_out=snakemake.output.detail,
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
        topp_job(**hand_arguments(args, "out", "detail"), topp_out=args.out, detail_out=args.detail)
