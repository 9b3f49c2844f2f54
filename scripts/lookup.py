"""Prompt-lookup decoding against MiniMind's cached generate -> lookup.json, rule only.

Opens the pretrained model on step 1's prompt and the SFT model (with its LoRA) on the temperature
question's chat prompt, at time.threads, and measures the loop at every K on both
(mminfer.measures.lookup.measure.measure_lookup).
"""

import logging

from mminfer.errors import MminferError
from mminfer.measures.lookup.measure import Case, LookupSettings, measure_lookup
from mminfer.model.loading import ModelSource, open_for_chat, open_for_task_prompt, run_info
from mminfer.model.prompts import TASK_LENGTH_KEYS
from mminfer.records import PretrainPrompt, write_record
from mminfer.timing.ab import Rounds
from mminfer.workflow.script import (
    job_log,
    rule_model,
    rule_only,
    rule_prompt,
)

log = logging.getLogger("mminfer")


def lookup(
    pretrain: ModelSource,
    prompt: PretrainPrompt,
    sft: ModelSource,
    new_tokens: int,
    rounds: Rounds,
    settings: LookupSettings,
    out,
):
    """Open both models on their prompts, measure the loop at every K, write lookup.json."""
    loaded, _, prompt_ids = open_for_task_prompt(pretrain, prompt, new_tokens, TASK_LENGTH_KEYS)
    # the chat prompt's record (its seed is temp's draws', unused here) is not kept
    chat, _, chat_ids, _ = open_for_chat(
        sft, prompt.tokenizer, settings.question, 0, settings.chatml_fallback
    )
    positions = chat.config.max_position_embeddings
    if len(chat_ids) + new_tokens > positions:
        raise MminferError(
            f"the chat prompt of config key temp.question ({len(chat_ids)} tokens) and "
            f"cache.new_tokens ({new_tokens}) reach past the SFT model's {positions} positions; "
            "expected a shorter question or fewer new tokens"
        )
    cases = [
        Case("validation", loaded.model, prompt_ids, loaded.device, run_info(loaded)),
        Case("chat", chat.model, chat_ids, chat.device, run_info(chat)),
    ]
    record = measure_lookup(cases=cases, new_tokens=new_tokens, rounds=rounds, settings=settings)
    for name, case in record.cases.items():
        for g in case.by_guesses:
            log.info(
                "%s, K %d: same ids %s, %d calls (cached %d), %d fed (cached %d), %d of %d "
                "guesses kept, speedup %s (%s)",
                name,
                g.guesses,
                g.same_ids,
                g.calls,
                case.calls_cached,
                g.fed,
                case.fed_cached,
                g.accepted,
                g.proposed,
                g.speedup,
                g.faster,
            )
    write_record(out, record)


if "snakemake" in globals():
    with job_log(snakemake.log[0]):
        lookup(
            pretrain=rule_model(snakemake, "pretrain"),
            prompt=rule_prompt(snakemake),
            sft=rule_model(snakemake, "sft"),
            new_tokens=snakemake.params.new_tokens,
            rounds=Rounds(
                warmup=snakemake.params.warmup,
                runs=snakemake.params.runs,
                max_runs=snakemake.params.max_runs,
            ),
            settings=LookupSettings(
                ngram=snakemake.params.ngram,
                guesses=tuple(snakemake.params.guesses),
                question=snakemake.params.question,
                chatml_fallback=snakemake.params.chatml_fallback,
            ),
            out=snakemake.output[0],
        )
elif __name__ == "__main__":
    rule_only("lookup", "lookup.json")
