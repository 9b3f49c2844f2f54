r"""A conversation's cache: every turn recomputed, or carried from the last -> conversation.json.

The SFT model answers config key conversation.questions in turn; also B users sharing a prompt
prefix, and generate's two cache pitfalls. Run by the workflow's `conversation` rule, or by hand:

    python scripts/conversation.py --sft /opt/mm/ref/sft.pth --tokenizer /opt/minimind/model \
        --out conversation.json
"""

import logging

from mminfer.measures.conversation.conversation import ConversationSettings
from mminfer.measures.conversation.measure import measure_conversation
from mminfer.model.finite import finite_logits, model_named
from mminfer.model.loading import ModelSource, open_with_tokenizer, run_info
from mminfer.records import write_record
from mminfer.workflow.script import (
    SFT,
    TOKENIZER,
    cli,
    hand_model,
    job_log,
    rule_model,
    section_keys,
    tokenizer_folder,
)

log = logging.getLogger("mminfer")


def conversation(
    sft: ModelSource, tokenizer, conversation: ConversationSettings, chatml_fallback: bool, out
):
    """Open the SFT model and its chat template, hold the conversation both ways ->
    conversation.json."""
    loaded, loaded_tokenizer = open_with_tokenizer(sft, tokenizer)
    template, template_source = loaded_tokenizer.chat_template(chatml_fallback)
    run = run_info(loaded)
    with finite_logits(loaded.model, f"{model_named(run.checkpoint, run.dtype)}, the conversation"):
        record = measure_conversation(
            loaded=loaded,
            tokenizer=loaded_tokenizer,
            template=template,
            template_source=template_source,
            tokenizer_source=str(tokenizer),
            settings=conversation,
            run=run,
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


if "snakemake" in globals():
    with job_log(snakemake.log[0]):
        conversation(
            sft=rule_model(snakemake, "sft"),
            tokenizer=tokenizer_folder(snakemake.input.tokenizer),
            conversation=ConversationSettings(**snakemake.params.conversation),
            chatml_fallback=snakemake.params.chatml_fallback,
            out=snakemake.output[0],
        )
elif __name__ == "__main__":
    args = cli(
        __doc__,
        paths=[SFT, TOKENIZER, ("--out", "conversation.json to write")],
        keys=["sft_lora", *section_keys("conversation"), "temp.chatml_fallback"],
    )
    with job_log(args.log):
        conversation(
            sft=hand_model(args, args.sft, input_key="sft", lora=args.sft_lora),
            tokenizer=args.tokenizer,
            conversation=ConversationSettings(
                questions=args.questions,
                new_tokens=args.new_tokens,
                warmup=args.warmup,
                runs=args.runs,
                max_runs=args.max_runs,
                users=args.users,
                shared_tokens=args.shared_tokens,
                user_prompt_tokens=args.user_prompt_tokens,
                user_new_tokens=args.user_new_tokens,
                seed=args.seed,
            ),
            chatml_fallback=args.chatml_fallback,
            out=args.out,
        )
