"""What one machine serves: decode steps per batch size, the users by speed and by memory.

Opens the model on the task's prompt and measures with mminfer.measures.serve.measure.serve; writes
serve.json.
"""

import logging

from mminfer.measures.serve import measure
from mminfer.measures.serve.measure import ServeSettings
from mminfer.model.loading import ModelSource, check_prompt_logits, open_for_task_prompt, run_info
from mminfer.records import PretrainPrompt, write_record
from mminfer.workflow.script import job_log, rule_model, rule_only, rule_prompt

log = logging.getLogger("mminfer")


def serve_batches(model: ModelSource, prompt: PretrainPrompt, serve: ServeSettings, out):
    """Open the model on the task's prompt, clock the batches' decode steps, write serve.json."""
    loaded, _, prompt_ids = open_for_task_prompt(
        model, prompt, serve.decode_steps + 1, "cache.prompt_tokens + serve.decode_steps + 1"
    )
    check_prompt_logits(loaded, prompt_ids)  # the timing keeps no logits to check
    served = measure.serve(
        model=loaded.model,
        config=loaded.config,
        prompt_ids=prompt_ids,
        settings=serve,
        device=loaded.device,
        run=run_info(loaded),
    )
    for row in served.batches:
        log.info(
            "batch %d: prefill %s s, decode step %.4f s (spread of the passes %.1f%%: %s), "
            "%.1f tokens/s (%.1f per user), KV %d B (formula %d), experts touched %s",
            row.batch,
            row.prefill_s,
            row.decode_step_s,
            row.cv_decode_step * 100,
            row.verdict,
            row.tokens_per_second,
            row.per_user_tokens_per_second,
            row.kv_bytes,
            row.formula_kv_bytes,
            row.experts_touched,
        )
    log.info(
        "tokens per second peak at batch %d (%.1f x the smallest); growth under %.0f%% a "
        "doubling from batch %d; cliffs %s; the table's verdict: %s %s",
        served.peak_batch,
        served.peak_gain,
        served.growth_per_doubling * 100,
        served.growth_stops_at,
        [(cliff.from_batch, cliff.to_batch, cliff.likely_cause) for cliff in served.cliffs],
        served.verdict,
        served.doubts,
    )
    users = served.users
    log.info(
        "users at %s tokens/s and %d tokens of context: %d by speed (%s), %s by memory; %s binds",
        users.tokens_per_second,
        users.context,
        users.users_by_speed,
        users.speed_how,
        users.users_by_memory,
        users.binding,
    )
    write_record(out, served)


if "snakemake" in globals():
    with job_log(snakemake.log[0]):
        serve_batches(
            model=rule_model(snakemake),
            prompt=rule_prompt(snakemake),
            serve=ServeSettings(**snakemake.params.serve),
            out=snakemake.output[0],
        )
elif __name__ == "__main__":
    rule_only("serve", "serve.json")
