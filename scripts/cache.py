r"""Steps 1-2 of the task: greedy generation with and without the KV cache.

Writes same.json (same_ids, ids, prompt_len, new_tokens, ...) and count.json (prompt_len,
new_tokens, fed_with_cache, fed_without_cache, ...). Run by the workflow's `cache` rule, or by hand:

    python scripts/cache.py --pretrain /opt/mm/ref/pretrain.pth --tokenizer /opt/minimind/model \
        --val-data /opt/mm/data/pretrain_val.jsonl --outdir /root/mm/infer
"""

from pathlib import Path

from mminfer.jobs.cache import cache_job
from mminfer.loading import ModelSpec
from mminfer.script import PROMPT_FILES, PROMPT_KEYS, cli, hand_arguments, job_log, tokenizer_folder

if "snakemake" in globals():
    with job_log(snakemake.log[0]):
        cache_job(
            pretrain=snakemake.input.pretrain,
            tokenizer=tokenizer_folder(snakemake.input.tokenizer),
            val_data=snakemake.input.val_data,
            docs=snakemake.params.docs,
            prompt_tokens=snakemake.params.prompt_tokens,
            new_tokens=snakemake.params.new_tokens,
            model=ModelSpec(**snakemake.params.model),
            threads=snakemake.threads,
            same_out=snakemake.output.same,
            count_out=snakemake.output.counts,
        )
elif __name__ == "__main__":
    args = cli(
        __doc__,
        paths=[*PROMPT_FILES, ("--outdir", "where same.json and count.json go")],
        keys=PROMPT_KEYS,
    )
    with job_log(args.log):
        cache_job(
            **hand_arguments(args, "outdir"),
            same_out=Path(args.outdir) / "same.json",
            count_out=Path(args.outdir) / "count.json",
        )
