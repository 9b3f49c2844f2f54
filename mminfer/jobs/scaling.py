"""Rules of rules/scaling.smk: beyond the task, cost against length and what fits on a card."""

from __future__ import annotations

import logging

from mminfer import capacity, serve, sweep
from mminfer.loading import (
    ModelSource,
    check_prompt_logits,
    open_for_task_prompt,
    open_model,
    run_info,
)
from mminfer.prompts import check_length
from mminfer.records import PretrainPrompt, write_record
from mminfer.serve import ServeSettings
from mminfer.sweep import SweepSettings

log = logging.getLogger("mminfer")


def sweep_job(model: ModelSource, prompt: PretrainPrompt, settings: SweepSettings, out):
    """Cost against generation length -> sweep.json (per-step times, every length, the fit)."""
    keys = "cache.prompt_tokens + max(sweep.lengths)"
    loaded, _, prompt_ids = open_for_task_prompt(model, prompt, max(settings.lengths), keys)
    check_prompt_logits(loaded, prompt_ids)  # the timing keeps no logits to check
    swept = sweep.sweep(
        loaded.model,
        prompt_ids,
        settings,
        loaded.device,
        run_info(loaded),
        loaded.config.max_position_embeddings,
    )
    ratios = []
    for point in swept.points:
        if point.time_ratio is None:
            ratios.append(None)
        else:
            ratios.append(round(point.time_ratio, 2))
    log.info(
        "time ratio %s at N = %s (uncached steps from %s); fit holds: %s (R² %s); "
        "spread of the runs %.1f%% with, %.1f%% without the cache: %s",
        ratios,
        swept.lengths,
        [point.without_cache_from for point in swept.points],
        swept.fit.holds,
        swept.fit.r2,
        swept.cv_with_cache * 100,
        swept.cv_without_cache * 100,
        swept.verdict,
    )
    write_record(out, swept)
    return swept


def capacity_job(
    model: ModelSource,
    memory_gib: list[float],
    contexts: list,
    batch: int,
    batch_context: int,
    out,
):
    """KV bytes per token per dtype and the sequences that fit on a card -> capacity.json."""
    loaded = open_model(model)
    check_length(batch_context, loaded.config.max_position_embeddings, "capacity.batch_context")
    fits = capacity.capacity(
        loaded.model,
        loaded.config,
        loaded.device,
        memory_gib,
        contexts,
        batch,
        batch_context,
        run_info(loaded),
    )
    log.info(
        "bytes per token %s; batch check matches: %s",
        {dtype: entry.measured for dtype, entry in fits.bytes_per_token.items()},
        fits.batch_check.matches,
    )
    write_record(out, fits)
    return fits


def serve_job(model: ModelSource, prompt: PretrainPrompt, settings: ServeSettings, out):
    """What one machine serves -> serve.json.

    The decode steps per batch size, and the users by speed and by memory.
    """
    keys = "cache.prompt_tokens + serve.decode_steps + 1"
    new_tokens = settings.decode_steps + 1
    loaded, _, prompt_ids = open_for_task_prompt(model, prompt, new_tokens, keys)
    check_prompt_logits(loaded, prompt_ids)  # the timing keeps no logits to check
    served = serve.serve(
        loaded.model, loaded.config, prompt_ids, settings, loaded.device, run_info(loaded)
    )
    for row in served.batches:
        log.info(
            "batch %d: prefill %s s, decode step %.4f s (passes %.4f-%.4f, spread %.1f%%: %s), "
            "%.1f tokens/s (%.1f per user), KV %d B (formula %d), experts touched %s",
            row.batch,
            row.prefill_s,
            row.decode_step_s,
            row.step_low_s,
            row.step_high_s,
            row.cv_decode_step * 100,
            row.verdict,
            row.tokens_per_second,
            row.per_user_tokens_per_second,
            row.kv_bytes,
            row.formula_kv_bytes,
            row.experts_touched,
        )
    log.info(
        "tokens per second peak at batch %d (%.1f x the smallest); growth under %.0f%% a doubling "
        "from batch %d; cliffs %s; the table's verdict: %s %s",
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
    return served
