"""Cost against generation length: every step of one clocked generation per method -> sweep.json."""

from pathlib import Path

from mminfer.jobs import sweep_job
from mminfer.script import job_log, rule_params

if "snakemake" in globals():
    params = rule_params(snakemake)
    with job_log(snakemake.log[0]):
        sweep_job(**params | {"threads": params["threads"] or snakemake.threads}, pretrain=snakemake.input.pretrain,
                  tokenizer=Path(snakemake.input.tokenizer[0]).parent, val_data=snakemake.input.val_data,
                  out=snakemake.output[0])
