"""What fits on a card: KV bytes per token per dtype, sequences per memory size -> capacity.json.

Opens the model and measures with mminfer.measures.capacity.measure.capacity.
"""

import logging

from mminfer.measures.capacity import measure as capacity
from mminfer.measures.capacity.measure import CapacitySettings
from mminfer.model.loading import ModelSource, open_model, run_info
from mminfer.model.prompts import check_length
from mminfer.records import write_record
from mminfer.workflow.script import job_log, rule_model, rule_only


def capacity_of(model: ModelSource, settings: CapacitySettings, out):
    """Open the model, measure what its cache costs per token and what fits, write capacity.json."""
    loaded = open_model(model)
    max_positions = loaded.config.max_position_embeddings
    check_length(settings.batch_context, max_positions, "capacity.batch_context")
    fits = capacity.capacity(
        model=loaded.model,
        config=loaded.config,
        device=loaded.device,
        settings=settings,
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
            settings=CapacitySettings(
                memory_gib=snakemake.params.memory_gib,
                contexts=snakemake.params.contexts,
                batch=snakemake.params.batch,
                batch_context=snakemake.params.batch_context,
            ),
            out=snakemake.output[0],
        )
elif __name__ == "__main__":
    rule_only("capacity", "capacity.json")
