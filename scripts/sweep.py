"""Cost against generation length: the steps of clocked generations -> sweep.json.

Opens the model on the task's prompt, long enough for the longest length, and measures with
mminfer.measures.sweep.measure.sweep (per-step times, every length, the fit).
"""

import logging

from mminfer.measures.sweep import measure
from mminfer.measures.sweep.measure import SweepSettings
from mminfer.model.loading import ModelSource, check_prompt_logits, open_for_task_prompt, run_info
from mminfer.records import PretrainPrompt, write_record
from mminfer.workflow.script import job_log, rule_model, rule_only, rule_prompt


def sweep_lengths(model: ModelSource, prompt: PretrainPrompt, sweep: SweepSettings, out):
    """Open the model on the task's prompt, clock the generations' steps, write sweep.json."""
    loaded, _, prompt_ids = open_for_task_prompt(
        model, prompt, max(sweep.lengths), "cache.prompt_tokens + max(sweep.lengths)"
    )
    check_prompt_logits(loaded, prompt_ids)  # the timing keeps no logits to check
    swept = measure.sweep(
        model=loaded.model,
        prompt_ids=prompt_ids,
        settings=sweep,
        device=loaded.device,
        run=run_info(loaded),
        max_positions=loaded.config.max_position_embeddings,
    )
    logging.getLogger("mminfer").info(
        "time ratio %s at N = %s (uncached steps from %s); fit holds: %s (R² %s); "
        "spread of the runs %.1f%% with, %.1f%% without the cache: %s",
        [None if p.time_ratio is None else round(p.time_ratio, 2) for p in swept.points],
        swept.lengths,
        [point.without_cache_from for point in swept.points],
        swept.fit.holds,
        swept.fit.r2,
        swept.cv_with_cache * 100,
        swept.cv_without_cache * 100,
        swept.verdict,
    )
    write_record(out, swept)


if "snakemake" in globals():
    with job_log(snakemake.log[0]):
        sweep_lengths(
            model=rule_model(snakemake),
            prompt=rule_prompt(snakemake),
            sweep=SweepSettings(**snakemake.params.sweep),
            out=snakemake.output[0],
        )
elif __name__ == "__main__":
    rule_only("sweep", "sweep.json")
