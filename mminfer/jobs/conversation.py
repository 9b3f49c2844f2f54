"""The rule of rules/conversation.smk: a conversation's cache, carried or recomputed."""

from __future__ import annotations

import logging

from mminfer.conversation import ConversationSettings, measure_conversation
from mminfer.loading import ModelSource, open_with_tokenizer, run_info
from mminfer.records import write_record

log = logging.getLogger("mminfer")


def conversation_job(
    model: ModelSource,
    tokenizer,
    settings: ConversationSettings,
    chatml_fallback: bool,
    out,
):
    """Open the SFT model and its chat template, hold the conversation both ways ->
    conversation.json."""
    loaded, loaded_tokenizer = open_with_tokenizer(model, tokenizer)
    template, template_source = loaded_tokenizer.chat_template(chatml_fallback)
    record = measure_conversation(
        loaded.model,
        loaded.config,
        loaded_tokenizer,
        template,
        template_source,
        str(tokenizer),
        settings,
        loaded.device,
        run_info(loaded),
    )
    for turn in record.turns:
        log.info(
            "turn %d: prompt %d, reused %d (held %d), fed %d recompute / %d carry (formulas %s), "
            "same ids %s, max |logit difference| %.3g, prefix break %s, time to first token %s",
            turn.turn,
            turn.prompt_len,
            turn.reused,
            turn.held,
            turn.fed_recompute,
            turn.fed_carry,
            turn.fed_match,
            turn.same_ids,
            turn.max_abs_logit_diff,
            turn.prefix_break,
            turn.timing and (turn.timing.recompute_s, turn.timing.carry_s, turn.timing.verdict),
        )
    shared = record.shared_prefix
    log.info(
        "%d users sharing %d of %d prompt tokens: generate holds %d B (formula %d B), a server "
        "sharing the prefix at best %d B; users by memory %s copied, %s shared (bound)",
        shared.users,
        shared.shared_tokens,
        shared.prompt_len,
        shared.measured_bytes,
        shared.formula_bytes,
        shared.shared_bound_bytes,
        shared.users_copied,
        shared.users_shared_bound,
    )
    for pitfall in record.pitfalls:
        log.info("pitfall %s: %s %s", pitfall.name, pitfall.error_type, pitfall.error_message)
    write_record(out, record)
    return record
