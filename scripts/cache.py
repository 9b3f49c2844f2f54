r"""Steps 1-2 of the task: greedy generation with and without the KV cache.

Writes same.json (same_ids, ids, prompt_len, new_tokens, ...) and count.json (prompt_len,
new_tokens, fed_with_cache, fed_without_cache, ...). Run by the workflow's `cache` rule, or by hand:

    python scripts/cache.py --pretrain /opt/mm/ref/pretrain.pth --tokenizer /opt/minimind/model \
        --val-data /opt/mm/data/pretrain_val.jsonl --outdir /root/mm/infer
"""

from pathlib import Path

from mminfer.jobs.cache import cache_job
from mminfer.loading import ModelSource, ModelSpec
from mminfer.records import PretrainPrompt
from mminfer.script import (
    PROMPT_FILES,
    PROMPT_KEYS,
    cli,
    hand_model,
    hand_prompt,
    job_log,
    tokenizer_folder,
)

if "snakemake" in globals():
    with job_log(snakemake.log[0]):
        cache_job(
            model=ModelSource(
                checkpoint=snakemake.input.pretrain,
                spec=ModelSpec(**snakemake.params.model),
                threads=snakemake.threads,
            ),
            prompt=PretrainPrompt(
                tokenizer=tokenizer_folder(snakemake.input.tokenizer),
                val_data=snakemake.input.val_data,
                docs=snakemake.params.docs,
                prompt_tokens=snakemake.params.prompt_tokens,
            ),
            new_tokens=snakemake.params.new_tokens,
            same_out=snakemake.output.same,
            count_out=snakemake.output.fed,
        )
elif __name__ == "__main__":
    args = cli(
        __doc__,
        paths=[*PROMPT_FILES, ("--outdir", "where same.json and count.json go")],
        keys=PROMPT_KEYS,
    )
    with job_log(args.log):
        cache_job(
            model=hand_model(args, args.pretrain),
            prompt=hand_prompt(args),
            new_tokens=args.new_tokens,
            same_out=Path(args.outdir) / "same.json",
            count_out=Path(args.outdir) / "count.json",
        )
