"""Step 4: the KV cache's bytes after feeding random tokens, against the formula -> kvbytes.json.

Run by the workflow's `kvbytes` rule, or by hand:

    python scripts/kvbytes.py --pretrain /opt/mm/ref/pretrain.pth --out kvbytes.json
"""

import logging

from mminfer.measures.kvbytes import measure as kvcache
from mminfer.model.loading import ModelSource, open_model, run_info
from mminfer.model.prompts import check_length
from mminfer.records import write_record
from mminfer.workflow.script import PRETRAIN, cli, hand_model, job_log, rule_model, section_keys


def kvbytes(model: ModelSource, tokens: int, seed: int, out):
    """Open the model, fill its cache with ``tokens`` random tokens, write what it holds."""
    loaded = open_model(model)
    check_length(tokens, loaded.config.max_position_embeddings, "kvbytes.tokens")
    kv = kvcache.measure_kv_bytes(
        model=loaded.model,
        config=loaded.config,
        tokens=tokens,
        seed=seed,
        device=loaded.device,
        run=run_info(loaded),
    )
    logging.getLogger("mminfer").info(
        "measured_bytes=%d formula_bytes=%d k_shape=%s",
        kv.measured_bytes,
        kv.formula_bytes,
        kv.k_shape,
    )
    write_record(out, kv)


if "snakemake" in globals():
    with job_log(snakemake.log[0]):
        kvbytes(
            model=rule_model(snakemake),
            tokens=snakemake.params.tokens,
            seed=snakemake.params.seed,
            out=snakemake.output[0],
        )
elif __name__ == "__main__":
    args = cli(
        __doc__,
        paths=[PRETRAIN, ("--out", "kvbytes.json to write")],
        keys=section_keys("kvbytes"),
    )
    with job_log(args.log):
        kvbytes(
            model=hand_model(args, args.pretrain),
            tokens=args.tokens,
            seed=args.seed,
            out=args.out,
        )
