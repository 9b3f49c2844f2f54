"""Steps 1-2 of the task: greedy generation with and without the KV cache.

Writes same.json (same_ids, ids, prompt_len, new_tokens, ...) and count.json (prompt_len, new_tokens,
fed_with_cache, fed_without_cache, ...). Run by the workflow's `cache` rule, or by hand:

    python cache.py --pretrain /opt/mm/ref/pretrain.pth --tokenizer /opt/minimind/model \
        --val-data /opt/mm/data/pretrain_val.jsonl --outdir /root/mm/infer
"""

import argparse
from pathlib import Path

from mminfer.jobs import cache_job, model_spec_from
from mminfer.script import add_model_arguments, add_prompt_arguments, model_params_from_args, run_job


def main(pretrain, tokenizer, val_data, docs, prompt_tokens, new_tokens, model, same_out, count_out, log=None,
         threads=None):
    spec = model_spec_from(model, pretrain, threads)
    run_job(log, cache_job, spec, tokenizer, val_data, docs, prompt_tokens, new_tokens, same_out, count_out)


def parse_cli():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_prompt_arguments(parser)
    parser.add_argument("--outdir", required=True, help="where same.json and count.json go")
    add_model_arguments(parser)
    args = parser.parse_args()
    outdir = Path(args.outdir)
    return dict(pretrain=args.pretrain, tokenizer=args.tokenizer, val_data=args.val_data, docs=args.docs,
                prompt_tokens=args.prompt_tokens, new_tokens=args.new_tokens, model=model_params_from_args(args),
                same_out=outdir / "same.json", count_out=outdir / "count.json", log=args.log,
                threads=args.threads)


if "snakemake" in globals():
    main(snakemake.input.pretrain, Path(snakemake.input.tokenizer[0]).parent, snakemake.input.val_data,
         snakemake.params.docs, snakemake.params.prompt_tokens, snakemake.params.new_tokens,
         snakemake.params.model, snakemake.output.same, snakemake.output.counts, snakemake.log[0], snakemake.threads)
elif __name__ == "__main__":
    main(**parse_cli())
