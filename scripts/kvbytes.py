"""Step 4: the KV cache's bytes after feeding random tokens, against the formula -> kvbytes.json.

Run by the workflow's `kvbytes` rule, or by hand:

    python scripts/kvbytes.py --pretrain /opt/mm/ref/pretrain.pth --out kvbytes.json
"""

from mminfer.jobs.kvbytes import kvbytes_job
from mminfer.loading import ModelSource, ModelSpec
from mminfer.script import PRETRAIN, cli, hand_model, job_log

if "snakemake" in globals():
    with job_log(snakemake.log[0]):
        kvbytes_job(
            model=ModelSource(
                checkpoint=snakemake.input.pretrain,
                spec=ModelSpec(**snakemake.params.model),
                threads=snakemake.threads,
            ),
            tokens=snakemake.params.tokens,
            seed=snakemake.params.seed,
            out=snakemake.output[0],
        )
elif __name__ == "__main__":
    args = cli(
        __doc__,
        paths=[PRETRAIN, ("--out", "kvbytes.json to write")],
        keys=["kvbytes.tokens", "kvbytes.seed"],
    )
    with job_log(args.log):
        kvbytes_job(
            model=hand_model(args, args.pretrain),
            tokens=args.tokens,
            seed=args.seed,
            out=args.out,
        )
