"""The oracles of conversation.json's sentences: each recomputes its words turn by turn from the
counts and the raw rounds (by the signs of their steps, mminfer.records.moves, and intervals of
its own), never with mminfer.measures.conversation.decide, which the sentences call.
``ORACLES[key](records, about)``: tests/oracles.py merges them.
"""

from __future__ import annotations

import itertools

from oracles_timing import judged_by

from mminfer.measures.conversation import decide
from mminfer.measures.conversation.conversation import Conversation
from mminfer.records.interval import (
    look_level,
    median_interval,
    order,
    ratio_decision,
    ratio_interval,
)
from mminfer.records.moves import up_every_step


def reused_in_turns(conversation: Conversation, chosen: str) -> bool:
    """conversation.reused's check: the tokens reused, turn by turn, up at every step
    ("grows"), by the signs of their steps (mminfer.records.moves)."""
    grows = up_every_step([turn.reused for turn in conversation.turns])
    return grows == (chosen == "grows")


def answers_in_turns(conversation: Conversation, chosen: str) -> bool:
    """conversation.answers's check: some turn's answer parted ("diverged"), or every turn's
    was the same and the tokens fed, added up over the turns, fell by carrying ("same_fewer")."""
    parted = any(not (turn.same_ids and turn.close_logits) for turn in conversation.turns)
    carry = sum(turn.fed_carry for turn in conversation.turns)
    recompute = sum(turn.fed_recompute for turn in conversation.turns)
    return {"diverged": parted, "same_fewer": not parted and carry < recompute}[chosen]


def turn_level(conversation: Conversation) -> float:
    """The level of each turn's looks: its rounds from ``runs`` to ``max_runs``."""
    return look_level(conversation.runs, conversation.max_runs)


def carry_decisions(conversation: Conversation) -> list[str]:
    """Each timed turn's per-round recompute / carry decided anew from its raw runs."""
    level = turn_level(conversation)
    return [
        ratio_decision(ratio_interval(t.timing.recompute_runs_s, t.timing.carry_runs_s, level))
        for t in decide.timed_turns(conversation)
    ]


def carry_supported(conversation: Conversation, chosen: str) -> bool:
    """conversation.carry_faster's check: "every": the raw runs decide carry faster at every
    timed turn; "slower": slower at some; "undecided": at none slower, at some not faster."""
    decisions = carry_decisions(conversation)
    if chosen == "every":
        return all(decision == "above" for decision in decisions)
    if chosen == "slower":
        return "below" in decisions
    return "below" not in decisions and any(decision != "above" for decision in decisions)


def saved_supported(conversation: Conversation, chosen: str) -> bool:
    """conversation.ttft_saved_grows's check: each timed turn's time saved, recomputed from its
    raw runs (each round's recompute - carry), lies wholly below the next turn's ("grows"), or
    some pair does not ("undecided")."""
    level = turn_level(conversation)
    saved = [
        median_interval(
            [r - c for r, c in zip(t.timing.recompute_runs_s, t.timing.carry_runs_s)], level
        )
        for t in decide.timed_turns(conversation)
    ]
    grows = all(order(a, b) == "below" for a, b in itertools.pairwise(saved))
    return grows == (chosen == "grows")


def falls_supported(conversation: Conversation) -> bool:
    """Its check: the same pair found from the raw runs' intervals, recomputed."""
    level = turn_level(conversation)
    found = decide.prompt_falls(
        conversation, lambda turn: median_interval(turn.timing.recompute_runs_s, level)
    )
    return bool(found)


ORACLES = {
    "conversation.answers_of": judged_by(answers_in_turns, "conversation"),
    "conversation.reused_of": judged_by(reused_in_turns, "conversation"),
    "conversation.carry_faster": judged_by(carry_supported, "conversation"),
    "conversation.falls_as_prompt_grows": judged_by(falls_supported, "conversation"),
    "conversation.saved_grows": judged_by(saved_supported, "conversation"),
}
