"""What fits on a card: KV bytes per token per dtype, sequences per memory size -> capacity.json.

Opens the model and measures with mminfer.measures.capacity.measure.capacity.
"""

import logging

from mminfer.measures.capacity import measure as capacity
from mminfer.model.loading import ModelSource, open_model, run_info
from mminfer.model.prompts import check_length
from mminfer.records import write_record
from mminfer.workflow.script import job_log, rule_model, rule_only


def capacity_of(model: ModelSource, memory_gib, contexts, batch: int, batch_context: int, out):
    """Open the model, measure what its cache costs per token and what fits, write capacity.json."""
    loaded = open_model(model)
    check_length(batch_context, loaded.config.max_position_embeddings, "capacity.batch_context")
    fits = capacity.capacity(
        model=loaded.model,
        config=loaded.config,
        device=loaded.device,
        memory_gib=memory_gib,
        contexts=contexts,
        batch=batch,
        batch_context=batch_context,
        run=run_info(loaded),
    )
    logging.getLogger("mminfer").info(
        "bytes per token %s; batch check matches: %s",
        {dtype: entry.measured for dtype, entry in fits.bytes_per_token.items()},
        fits.batch_check.matches,
    )
    write_record(out, fits)


if "snakemake" in globals():
    with job_log(snakemake.log[0]):
        capacity_of(
            model=rule_model(snakemake),
            memory_gib=snakemake.params.memory_gib,
            contexts=snakemake.params.contexts,
            batch=snakemake.params.batch,
            batch_context=snakemake.params.batch_context,
            out=snakemake.output[0],
        )
elif __name__ == "__main__":
    rule_only("capacity", "capacity.json")
