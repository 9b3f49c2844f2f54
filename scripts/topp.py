"""Step 6: top-p survivors after [bos] + prefix -> topp.json (and topp_detail.json)."""

from pathlib import Path

from mminfer.jobs import model_spec_from, topp_job
from mminfer.script import run_job

if "snakemake" in globals():
    spec = model_spec_from(snakemake.params.model, snakemake.input.pretrain, snakemake.threads)
    run_job(snakemake.log[0], topp_job, spec,
            Path(snakemake.input.tokenizer[0]).parent, snakemake.params.prefix, snakemake.params.sharp_prefix,
            snakemake.params.ps, snakemake.output.topp, snakemake.output.detail)
