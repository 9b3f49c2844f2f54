"""Step 3: the time of greedy generation with and without the KV cache -> time.json.

Median of the timed runs after the warm-up runs, for each method; speedup = without / with.
(Named time_generation.py so that it does not shadow the standard library's `time`.) Run by the
workflow's `time` rule, or by hand:

    python scripts/time_generation.py --pretrain /opt/mm/ref/pretrain.pth --tokenizer /opt/minimind/model \
        --val-data /opt/mm/data/pretrain_val.jsonl --out time.json
"""

import argparse
from pathlib import Path

from mminfer.jobs import model_spec_from, time_job
from mminfer.script import add_model_arguments, add_prompt_arguments, model_params_from_args, run_job


def parse_cli():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_prompt_arguments(parser)
    parser.add_argument("--out", required=True, help="time.json to write")
    parser.add_argument("--warmup", type=int, default=1, help="untimed runs per method (default 1)")
    parser.add_argument("--runs", type=int, default=3, help="timed runs per method (default 3)")
    parser.add_argument("--max-runs", type=int, default=9,
                        help="more interleaved rounds while the timing is doubtful, up to this many runs (default 9)")
    add_model_arguments(parser)
    return parser.parse_args()


if "snakemake" in globals():
    spec = model_spec_from(snakemake.params.model, snakemake.input.pretrain, snakemake.params.threads or snakemake.threads)
    run_job(snakemake.log[0], time_job, spec, Path(snakemake.input.tokenizer[0]).parent, snakemake.input.val_data,
            snakemake.params.docs, snakemake.params.prompt_tokens, snakemake.params.new_tokens,
            snakemake.params.warmup, snakemake.params.runs, snakemake.params.max_runs, snakemake.output[0])
elif __name__ == "__main__":
    args = parse_cli()
    spec = model_spec_from(model_params_from_args(args), args.pretrain, args.threads)
    run_job(args.log, time_job, spec, args.tokenizer, args.val_data, args.docs, args.prompt_tokens,
            args.new_tokens, args.warmup, args.runs, args.max_runs, args.out)
