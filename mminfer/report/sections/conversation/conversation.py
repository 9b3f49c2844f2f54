"""## 대화: conversation.json's facts and glance row, beside serve.json's users."""

from __future__ import annotations

from mminfer.measures.conversation import decide
from mminfer.measures.conversation.conversation import Conversation, visible
from mminfer.measures.serve.serve import Serve
from mminfer.records import Glance, within_rounding
from mminfer.report.sections.conversation import joins


def conversation_facts(conversation: Conversation) -> dict:
    """conversation.json's facts and verdicts for the report's section (conversation.md.j2).

    Whether the tokens fed follow their formulas and the answers are the same, the share of tokens
    the carried cache saves, each prefix break with its texts made visible, each timed turn, the
    shared prefix's saving and the pitfalls (each error's first line). Serve.json's users by
    memory beside the shared prefix's are this module's join: here
    ``serve_users`` is None and ``same_context`` does not hold.
    """
    turns = conversation.turns
    diverged = []
    for turn in decide.diverged_turns(conversation):
        difference = turn.first_difference
        rounding = None
        if difference is not None:
            rounding = within_rounding(
                difference.max_abs_logit_diff, difference.max_abs_logit, conversation.run.dtype
            )
        diverged.append({"turn": turn, "difference": difference, "rounding_sized": rounding})
    breaks = []
    for turn in turns:
        broke = turn.prefix_break
        if broke is None:
            continue
        breaks.append(
            {
                "turn": turn.turn,
                "break": broke,
                "held_text": visible(broke.held_text),
                "prompt_text": visible(broke.prompt_text),
                "before_text": visible(broke.before_text),
                "dropped": turn.held - turn.reused,
            }
        )
    timed = [turn for turn in turns if turn.timing is not None]
    shared = conversation.shared_prefix
    users_gain = None
    if shared.users_copied is not None and shared.users_copied > 0:
        users_gain = shared.users_shared_bound / shared.users_copied
    user_tokens = shared.prompt_len + shared.new_tokens  # P + N: one user's cache at the end
    pitfalls = []
    for pitfall in conversation.pitfalls:
        message = None
        if pitfall.error_message is not None:
            message = visible(pitfall.error_message.splitlines()[0][:160])
        pitfalls.append(
            {"pitfall": pitfall, "message": message, "lesson": decide.pitfall_lesson(pitfall)}
        )
    run = conversation.run
    last = turns[-1]
    return {
        "record": conversation,
        "turn_count": len(turns),
        "ids_past_tokenizer": sum(turn.ids_past_tokenizer for turn in turns),
        "fed_match": all(turn.fed_match for turn in turns) and conversation.totals_match,
        "saved_share": conversation.total_saved_tokens / conversation.total_fed_recompute,
        "prompt_ratio": conversation.prompt_tokens_recompute / conversation.prompt_tokens_carry,
        "last_reused_share": last.reused / last.prompt_len_carry,
        "diverged": diverged,
        "max_abs_logit_diff": max(turn.max_abs_logit_diff for turn in turns),
        "logits_equal": all(turn.max_abs_logit_diff == 0 for turn in turns),
        "breaks": breaks,
        "timed": timed,
        "timing_trusted": conversation.timing_verdict == "ok",
        "timing_untrusted": conversation.timing_verdict == "untrusted",
        "shared": shared,
        "shared_saving": shared.copied_tokens / shared.shared_bound_tokens,
        "users_gain": users_gain,
        "users_gain_known": users_gain is not None,
        "user_tokens": user_tokens,
        "serve_users": None,  # serve.json's users by memory: the report's join
        "same_context": False,
        "pitfalls": pitfalls,
        "device": run.device_name if run.device == "cuda" else "cpu",
        "dtype": run.dtype,
        "backend": run.backend,
        "threads": conversation.threads,
        "answers": decide.answers_of(conversation),
        "formulas": decide.formulas_of(conversation),
        "glance_lesson": decide.glance_lesson(conversation),
    }


def conversation_glance(conversation: Conversation) -> Glance:
    """## 대화's row: the tokens carrying saves; the lesson "same_saves" (the same answers, the
    counts on their formulas), "differs" (an answer or a count differs)."""
    same = conversation.same_answers and conversation.totals_match
    verdict = None if conversation.timing_verdict == "none" else conversation.timing_verdict
    return Glance(
        lesson="same_saves" if same else "differs",
        verdict=verdict,
        terms=("prefill", "carry", "recompute"),
    )


def conversation_serve_facts(conversation: Conversation, serve: Serve | None = None) -> dict:
    """conversation.json's facts (mminfer.measures.conversation.conversation.conversation_facts)
    and, with serve.json, its users by memory beside the shared prefix's: ``serve_users`` where
    both counted them, ``same_context`` where serve.json counted at this P + N."""
    serve_users = joins.users_beside(conversation, serve)
    return conversation_facts(conversation) | {
        "serve_users": serve_users,
        "same_context": joins.same_context(conversation, serve) == "same",
    }
