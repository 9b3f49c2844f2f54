"""Cost against generation length: the steps of clocked generations -> sweep.json.

Opens the model on the task's prompt, long enough for the longest length, and measures with
mminfer.sweep.sweep (per-step times, every length, the fit).
"""

import logging

from mminfer import sweep
from mminfer.loading import ModelSource, ModelSpec, open_for_task_prompt, run_info
from mminfer.records import PretrainPrompt, write_record
from mminfer.script import job_log, rule_only, tokenizer_folder
from mminfer.sweep import SweepSettings

if "snakemake" in globals():
    with job_log(snakemake.log[0]):
        settings = SweepSettings(**snakemake.params.sweep)
        loaded, _, prompt_ids = open_for_task_prompt(
            ModelSource(
                checkpoint=snakemake.input.pretrain,
                spec=ModelSpec(**snakemake.params.model),
                threads=snakemake.params.threads or snakemake.threads,  # time.threads, else all
            ),
            PretrainPrompt(
                tokenizer=tokenizer_folder(snakemake.input.tokenizer),
                val_data=snakemake.input.val_data,
                docs=snakemake.params.docs,
                prompt_tokens=snakemake.params.prompt_tokens,
            ),
            max(settings.lengths),
            "cache.prompt_tokens + max(sweep.lengths)",
        )
        swept = sweep.sweep(
            loaded.model,
            prompt_ids,
            settings,
            loaded.device,
            run_info(loaded),
            loaded.config.max_position_embeddings,
        )
        logging.getLogger("mminfer").info(
            "time ratio %s at N = %s; fit holds: %s (R² %s)",
            [round(point.time_ratio, 2) for point in swept.points],
            swept.lengths,
            swept.fit.holds,
            swept.fit.r2,
        )
        write_record(snakemake.output[0], swept)
elif __name__ == "__main__":
    rule_only("sweep", "sweep.json")
