"""What conversation.json decides: the answers both ways, the counts on their formulas, the
tokens reused, each timed turn's carry against recompute, and the pitfalls' lessons.

Each function takes the record (or one pitfall) and returns a variant word or whether its words
hold; a timing's from the raw rounds. The conversation job writes each turn's ``carry_faster``
with :func:`decide_carry_faster`; the report's sentences, glance row and the checker call these
again. Pure Python, no torch.
"""

from __future__ import annotations

import itertools

from mminfer.measures.conversation.conversation import Conversation, ConversationTurn, Pitfall
from mminfer.records.interval import order, rounds_faster


def decide_carry_faster(
    recompute_runs_s: list[float], carry_runs_s: list[float], runs: int, max_runs: int
) -> str:
    """A turn's ``carry_faster``, from its paired rounds (each round's recompute / carry): "yes",
    "no", "same" or "undecided" (mminfer.records.interval.rounds_faster)."""
    return rounds_faster(recompute_runs_s, carry_runs_s, runs, max_runs)


def turn_carry_faster(conversation: Conversation, turn: ConversationTurn) -> str:
    """:func:`decide_carry_faster` over a timed turn's own rounds."""
    timing = turn.timing
    return decide_carry_faster(
        timing.recompute_runs_s, timing.carry_runs_s, conversation.runs, conversation.max_runs
    )


def pitfall_lesson(pitfall: Pitfall) -> str:
    """The lesson the report draws from what generate did (the section's ``lessons``).

    "<name>:raised" when generate raised, "<name>:returned" when it gave back a batch of the rows
    asked, "<name>:other_rows" when it gave back another number of rows.
    """
    if pitfall.raised:
        return f"{pitfall.name}:raised"
    if pitfall.output_shape is not None and pitfall.output_shape[0] == pitfall.rows_asked:
        return f"{pitfall.name}:returned"
    return f"{pitfall.name}:other_rows"


def diverged_turns(conversation: Conversation) -> list[ConversationTurn]:
    """The turns whose answers parted: other ids, or logits apart beyond rounding."""
    return [turn for turn in conversation.turns if not (turn.same_ids and turn.close_logits)]


def answers_of(conversation: Conversation) -> str | None:
    """conversation.answers: "diverged" (the answers parted at the turns named), "same_fewer"
    (every turn's answer the same both ways and fewer tokens fed in all by carrying); None
    (the same answers, not fewer tokens)."""
    if diverged_turns(conversation):
        return "diverged"
    if conversation.total_fed_carry < conversation.total_fed_recompute:
        return "same_fewer"
    return None


def formulas_of(conversation: Conversation) -> str:
    """conversation.formulas: every count on its formula ("on"), or some not ("off")."""
    on = all(turn.fed_match for turn in conversation.turns) and conversation.totals_match
    return "on" if on else "off"


def reused_of(conversation: Conversation) -> str:
    """conversation.reused: the tokens reused rise every turn ("grows"), or not."""
    reused = [turn.reused for turn in conversation.turns]
    grows = len(reused) > 1 and all(b > a for a, b in itertools.pairwise(reused))
    return "grows" if grows else "not_grows"


def logits_of(conversation: Conversation) -> str | None:
    """conversation.logits: the same ids at every turn, with logits bit for bit "equal" or
    apart "within_rounding"; None where an answer parted."""
    if diverged_turns(conversation):
        return None
    largest = max(turn.max_abs_logit_diff for turn in conversation.turns)
    return "equal" if largest == 0 else "within_rounding"


def shared_bytes_of(conversation: Conversation) -> str:
    """conversation.shared_bytes: the shared prefix's cache on its formula, or not."""
    shared = conversation.shared_prefix
    return "match" if shared.measured_bytes == shared.formula_bytes else "differs"


def prefix_copied_of(conversation: Conversation) -> str:
    """conversation.prefix_copied: the first S positions the same in every row (copies)."""
    return "copied" if conversation.shared_prefix.prefix_rows_identical else "differ"


def timed_turns(conversation: Conversation) -> list[ConversationTurn]:
    """The turns timed (those that reused a cache)."""
    return [turn for turn in conversation.turns if turn.timing is not None]


CARRY = {"yes": "every", "same": "undecided", "undecided": "undecided", "no": "slower"}


def carry_faster(conversation: Conversation) -> str | None:
    """conversation.carry_faster: "every" (carry decided faster at every timed turn), "slower"
    (decided slower at some: a busy machine), "undecided" (else: the turns not decided are named);
    None where no turn was timed. Each turn decided from its raw rounds
    (:func:`decide_carry_faster`, the stored ``carry_faster``'s function)."""
    found = {CARRY[turn_carry_faster(conversation, turn)] for turn in timed_turns(conversation)}
    for word in ("slower", "undecided", "every"):
        if word in found:
            return word
    return None


def saved_grows(conversation: Conversation) -> str | None:
    """conversation.ttft_saved_grows: "grows" where the tokens reused and the time saved rise turn
    after turn, each turn's saved interval wholly below the next's; "undecided" where the tokens
    rise but the intervals do not order them; None for fewer than two timed turns."""
    timed = timed_turns(conversation)
    if len(timed) < 2:
        return None
    pairs = list(itertools.pairwise(timed))
    if not all(b.reused > a.reused for a, b in pairs):
        return None
    ordered = [order(a.timing.saved_interval, b.timing.saved_interval) for a, b in pairs]
    return "grows" if all(found == "below" for found in ordered) else "undecided"


def recompute_interval(turn: ConversationTurn):
    """A timed turn's recompute interval, as conversation.json holds it."""
    return turn.timing.recompute_interval


def prompt_falls(
    conversation: Conversation, intervals=recompute_interval
) -> list[tuple[ConversationTurn, ConversationTurn]]:
    """Every pair of timed turns (shorter prompt, longer prompt) whose recompute's intervals
    (``intervals(turn)``) say the shorter prompt took longer: what
    conversation.ttft_falls_as_prompt_grows names."""
    return [
        (shorter, longer)
        for shorter, longer in itertools.combinations(timed_turns(conversation), 2)
        if shorter.prompt_len < longer.prompt_len
        and order(intervals(shorter), intervals(longer)) == "above"
    ]


def falls_as_prompt_grows(conversation: Conversation) -> bool:
    """conversation.ttft_falls_as_prompt_grows: a shorter prompt's recompute decided slower than
    a longer one's (a prefill of more tokens cannot cost less: the machine, not the prompt)."""
    return bool(prompt_falls(conversation))


def glance_lesson(conversation: Conversation) -> str:
    """The conversation section's glance lesson: "same_saves" (the same answers, fewer tokens, the
    counts on their formulas), "differs" (an answer parted or a count off its formula), else
    "counted"."""
    answers, formulas = answers_of(conversation), formulas_of(conversation)
    if answers == "same_fewer" and formulas == "on":
        return "same_saves"
    if answers == "diverged" or formulas == "off":
        return "differs"
    return "counted"


def no_breaks(conversation: Conversation) -> bool:
    """conversation.no_breaks: no turn's prompt broke the previous turn's prefix."""
    return all(turn.prefix_break is None for turn in conversation.turns)


def stored_decisions(conversation: Conversation) -> dict[str, tuple[object, object]]:
    """conversation.json's stored decisions (each timed turn's ``carry_faster``) beside their
    recomputation from the rounds (the checker's)."""
    return {
        f"turns.{turn.turn}.timing.carry_faster": (
            turn.timing.carry_faster,
            turn_carry_faster(conversation, turn),
        )
        for turn in timed_turns(conversation)
    }
