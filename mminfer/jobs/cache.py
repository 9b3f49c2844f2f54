"""Rules of rules/cache.smk: steps 1-3 of the task, greedy generation with and without the cache."""

from __future__ import annotations

import logging

from mminfer import greedy, timing
from mminfer.loading import ModelSource, check_prompt_logits, open_for_task_prompt, run_info
from mminfer.prompts import TASK_LENGTH_KEYS
from mminfer.records import PretrainPrompt, write_record

log = logging.getLogger("mminfer")


def cache_job(model: ModelSource, prompt: PretrainPrompt, new_tokens: int, same_out, count_out):
    """Steps 1-2 -> same.json (same tokens?) and count.json (tokens fed)."""
    loaded, loaded_tokenizer, prompt_ids = open_for_task_prompt(
        model, prompt, new_tokens, TASK_LENGTH_KEYS
    )
    same, count = greedy.compare_cache(
        loaded.model,
        prompt_ids,
        new_tokens,
        loaded.device,
        loaded_tokenizer,
        prompt,
        run_info(loaded),
    )
    log.info(
        "same_ids=%s (max |logit difference| %.3g, first difference %s); fed %d with the cache "
        "(formula %d), %d without (formula %d)",
        same.same_ids,
        same.max_abs_logit_diff,
        same.first_difference,
        count.fed_with_cache,
        count.formula_with_cache,
        count.fed_without_cache,
        count.formula_without_cache,
    )
    write_record(same_out, same)
    write_record(count_out, count)
    return same, count


def time_job(
    model: ModelSource,
    prompt: PretrainPrompt,
    new_tokens: int,
    warmup: int,
    runs: int,
    max_runs: int,
    out,
):
    """Step 3 -> time.json at ``model.threads`` (time.threads, else the rule's cores)."""
    loaded, _, prompt_ids = open_for_task_prompt(model, prompt, new_tokens, TASK_LENGTH_KEYS)
    check_prompt_logits(loaded, prompt_ids)  # the timing keeps no logits to check
    timed = timing.time_cache(
        loaded.model,
        prompt_ids,
        new_tokens,
        warmup,
        runs,
        max_runs,
        loaded.device,
        run_info(loaded),
    )
    log.info(
        "with_cache_s %.4f, without_cache_s %.4f, speedup %.2f (CV %.1f%% / %.1f%%, %d runs, "
        "verdict %s, %d threads, load %s)",
        timed.with_cache_s,
        timed.without_cache_s,
        timed.speedup,
        100 * timed.cv_with_cache,
        100 * timed.cv_without_cache,
        timed.runs_done,
        timed.verdict,
        timed.threads,
        timed.load_after,
    )
    write_record(out, timed)
    return timed
