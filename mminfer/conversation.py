"""Beyond the task: a conversation's cache, and a prompt many users share.

MiniMind's eval_llm.py carries a chat's history by rendering the whole conversation through the
chat template every turn and prefilling all of it again (**recompute**). Since minimind-3, its
``generate`` takes a cache in (``past_key_values=``: only ``input_ids[:, past_len:]`` is fed, at
positions that start at the cache's length) and gives one back (``return_kv=True``), so a
conversation can **carry** its cache from turn to turn. The cache it returns holds every token but
the last one generated, and the re-rendered conversation need not tokenize to the ids that were
generated, so only the longest common prefix of ids between what the cache holds and the new
prompt is reused: the cache is cut to it and the rest of the prompt is fed.

Both ways run through the model's own ``generate`` (greedy, top_k=0, top_p=1.0, eos the
tokenizer's, as MiniMind's chat eval stops), and per turn this module measures the tokens fed
(counted on ``forward``) against their formulas, the same answers (ids, first divergence, largest
logit difference, as same.json), where re-tokenization broke the common prefix and why, and the
time to first token both ways (interleaved medians after warm-ups, as time.json).

Beside them: the KV bytes ``generate`` holds for B users whose prompts share a prefix (it copies
the prefix into every row), against a prefix-sharing server's bound; and two pitfalls of
``generate`` with a cache, caught and recorded, never raised.
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Callable
from dataclasses import dataclass

import torch

from mminfer.capacity import sequences_that_fit
from mminfer.counting import ForwardRecorder, fed_with_cache_formula
from mminfer.errors import MminferError
from mminfer.greedy import GREEDY, first_difference
from mminfer.kvcache import cache_tensor_bytes, kv_formula_bytes, random_tokens
from mminfer.loading import dtype_name
from mminfer.records import FirstDifference, RunInfo
from mminfer.serve import available_bytes
from mminfer.timing import (
    NOISY_CV,
    coefficient_of_variation,
    doubts_about,
    interleaved_runs,
    load_average,
    synced_clock,
    verdict_of,
)
from mminfer.tokenizer import Tokenizer

# Largest logit difference between the two ways still taken as rounding, relative to the largest
# logit: the carried turn attends with the explicit softmax where recompute's prefill runs fused
# SDPA, so the logits may differ in their last bits; a wrong position differs by far more.
LOGIT_RTOL = {"float32": 1e-4, "float16": 5e-2, "bfloat16": 5e-2}

# The pitfalls, by name: what is asked of generate, and the lesson the report states.
CACHE_COVERS_INPUT = "cache_covers_input"
RETURN_SEQUENCES_WITH_BATCH1_CACHE = "return_sequences_with_batch1_cache"

BREAK_TEXT_CHARS = 12  # characters shown either side of a prefix break

ORDER = "interleaved: warm-ups of both, then rounds of (carry, recompute)"


# --- the record ----------------------------------------------------------------------------------


@dataclass
class PrefixBreak:
    """Where the ids the carried cache holds and the new prompt's ids first differ, and why.

    ``reason`` is "same_text_other_tokens" when the held ids' text goes on in the new prompt's
    text (the same text split into other tokens); "newlines_stripped" when the held text goes on
    with a newline the template dropped (minimind-3's ``content.lstrip('\\n')``);
    "partial_character" when the answer was cut inside a character, which decoding wrote as U+FFFD
    and the template re-encoded as that character's bytes; else "template_text_differs" (the
    template rendered other text than was generated: a <think> block, a special token decoding
    dropped).
    """

    position: int  # 0-based index into the ids
    answer_offset: int  # position - the previous prompt's length: where in the previous answer
    held_token: int
    prompt_token: int
    held_text: str  # the held ids' text from the position (12 characters, special tokens kept)
    prompt_text: str  # the prompt's text from the position (12 characters)
    before_text: str  # the 12 characters before the position
    reason: str


@dataclass
class TurnTiming:
    """Time to first token of one turn both ways: generate with max_new_tokens=1."""

    carry_s: float  # median
    recompute_s: float
    saved_s: float  # recompute_s - carry_s
    speedup: float  # recompute_s / carry_s
    cv_carry: float
    cv_recompute: float
    runs_done: int
    extra_rounds: int
    doubts: list[str]  # as time.json's: "cache_not_faster" means carry not faster
    verdict: str  # "ok", "noisy" or "untrusted"
    carry_runs_s: list[float]
    recompute_runs_s: list[float]
    carry_warmup_s: list[float]
    recompute_warmup_s: list[float]


@dataclass
class ConversationTurn:
    """One turn, both ways: tokens, reuse, answers and time to first token."""

    turn: int  # 1-based
    question: str
    prompt_len: int  # P: the whole conversation so far, rendered and tokenized (recompute's)
    held: int  # tokens the carried cache held (the previous prompt and answer but its last token)
    common_prefix: int  # longest common prefix of the held ids and the new prompt's ids
    reused: int  # R: the cache cut to this many tokens (at most P - 1: one token must be fed)
    new_tokens: int  # N: recompute's answer, eos included
    new_tokens_carry: int
    fed_first_recompute: int  # the first forward call's tokens
    fed_first_carry: int
    fed_recompute: int  # every forward call's tokens
    fed_carry: int
    formula_first_recompute: int  # P
    formula_first_carry: int  # P - R
    formula_recompute: int  # P + (N - 1)
    formula_carry: int  # (P - R) + (N - 1)
    fed_match: bool  # all four counts equal their formulas
    saved_tokens: int  # fed_recompute - fed_carry
    same_prompt: bool  # both ways' conversations rendered to the same ids
    same_ids: bool
    ids: list[int]  # recompute's new tokens
    ids_carry: list[int]
    max_abs_logit_diff: float  # over the steps up to the first different token
    max_abs_logit: float  # recompute's, over the same steps: the scale of rounding
    close_logits: bool  # max_abs_logit_diff <= logit_rtol x max_abs_logit
    # the first different token; its *_with_cache fields are carry's, *_without_cache recompute's
    first_difference: FirstDifference | None
    answer: str  # recompute's answer, decoded as eval_llm.py does (special tokens skipped)
    prefix_break: PrefixBreak | None  # None: the whole held cache was a prefix of the prompt
    timing: TurnTiming | None  # None: nothing reused (the first turn), nothing to time


@dataclass
class SharedPrefix:
    """B users whose prompts share a prefix of S tokens, generated as one batch.

    MiniMind's generate keeps a (B, tokens, kv_heads, head_dim) cache: the shared prefix copied
    into every row (measured). A server that shares prefix blocks would hold it once: a bound.
    """

    users: int  # B
    shared_tokens: int  # S
    prompt_len: int  # P, each user's
    new_tokens: int  # N
    seed: int  # of the random token ids (their values do not change the bytes)
    held_tokens: int  # the returned cache's length: P + N - 1 (the last token is never fed)
    k_shape: list[int]
    measured_bytes: int  # the byte sum of the returned cache's tensors
    formula_bytes: int  # 2 x layers x B x held x kv_heads x head_dim x bytes
    matches: bool
    prefix_rows_identical: bool  # every row's first S keys and values equal row 0's: copies
    bytes_per_token: int
    copied_tokens: int  # B x held: what generate holds
    shared_bound_tokens: int  # S + B x (held - S): a prefix-sharing server, at best
    shared_bound_bytes: int
    copied_prefix_bytes: int  # (B - 1) x S x bytes_per_token: the copies a server would not hold
    free_bytes: int | None  # of this device, now (the weights loaded)
    free_source: str
    users_copied: int | None  # floor(free / (bytes_per_token x (P + N)))
    users_shared_bound: int | None  # floor((free - S x bpt) / (bpt x (P - S + N))): a bound
    copied_formula: str
    shared_formula: str


@dataclass
class Pitfall:
    """What ``generate`` does when asked one thing a learner trips over: caught, never raised."""

    name: str  # CACHE_COVERS_INPUT or RETURN_SEQUENCES_WITH_BATCH1_CACHE
    call: str  # what was asked, in words
    input_len: int
    cache_len: int
    cache_rows: int
    rows_asked: int  # num_return_sequences
    raised: bool
    error_type: str | None
    error_message: str | None
    output_shape: list[int] | None  # when it returned


@dataclass
class Conversation:
    """conversation.json: carrying the cache across chat turns against recomputing it."""

    questions: list[str]
    new_tokens: int  # the cap per answer
    eos_token_id: int
    template: str  # where the chat template came from
    tokenizer: str
    turns: list[ConversationTurn]
    total_fed_recompute: int
    total_fed_carry: int
    formula_total_recompute: int  # sum of P_k + (N_k - 1): grows with the square of the turns
    formula_total_carry: int  # sum of (P_k - R_k) + (N_k - 1)
    totals_match: bool
    total_saved_tokens: int
    prompt_tokens_recompute: int  # sum of P_k: each turn prefills everything so far
    prompt_tokens_carry: int  # sum of P_k - R_k
    saved_grows: bool  # the tokens reused grow from turn to turn
    prefix_breaks: int  # turns whose held ids were not all a prefix of the new prompt
    same_answers: bool  # every turn's ids equal and logits close
    logit_rtol: float
    warmup: int
    runs: int
    max_runs: int
    order: str
    noisy_cv: float
    timing_verdict: str  # the worst verdict of the timed turns ("none" when none was timed)
    threads: int
    load_before: list[float] | None
    load_after: list[float] | None
    shared_prefix: SharedPrefix
    pitfalls: list[Pitfall]
    run: RunInfo


# --- the cache ---------------------------------------------------------------------------------


def truncate_cache(past_key_values, length: int):
    """The cache's first ``length`` positions of every layer (views; the cache is not changed)."""
    if length == 0:
        return None
    return [(k[:, :length], v[:, :length]) for k, v in past_key_values]


def cache_length(past_key_values) -> int:
    """Positions held: the first layer's K is (batch, length, kv_heads, head_dim)."""
    return int(past_key_values[0][0].shape[1])


def common_prefix(held: list[int], prompt: list[int]) -> int:
    """The length of the longest common prefix of two id lists."""
    length = 0
    for a, b in zip(held, prompt):
        if a != b:
            break
        length += 1
    return length


def newlines_stripped(held_rest: str, prompt_rest: str) -> bool:
    """Whether the prompt goes on with the held text less its leading newlines.

    A held text of newlines only was stripped when the prompt does not hold those newlines at all.
    """
    stripped = held_rest.lstrip("\n")
    if stripped == held_rest or prompt_rest.startswith("\n"):
        return False
    if stripped:
        return prompt_rest.startswith(stripped)
    return held_rest not in prompt_rest


def prefix_break(
    tokenizer: Tokenizer,
    held: list[int],
    prompt: list[int],
    previous_prompt_len: int,
    answer_text: str,
) -> PrefixBreak | None:
    """Where the held ids stop being a prefix of the prompt, the tokens there and why.

    ``answer_text`` is the previous answer as it went into the history (decoded).
    """
    position = common_prefix(held, prompt)
    if position >= len(held) or position >= len(prompt):
        return None
    held_rest = tokenizer.decode(held[position:], skip_special_tokens=False)
    prompt_rest = tokenizer.decode(prompt[position:], skip_special_tokens=False)
    before = tokenizer.decode(held[:position], skip_special_tokens=False)
    if answer_text.endswith("\ufffd") and "\ufffd" in prompt_rest:
        reason = "partial_character"
    elif prompt_rest.startswith(held_rest):
        reason = "same_text_other_tokens"
    elif newlines_stripped(held_rest, prompt_rest):
        reason = "newlines_stripped"
    else:
        reason = "template_text_differs"
    return PrefixBreak(
        position=position,
        answer_offset=position - previous_prompt_len,
        held_token=held[position],
        prompt_token=prompt[position],
        held_text=held_rest[:BREAK_TEXT_CHARS],
        prompt_text=prompt_rest[:BREAK_TEXT_CHARS],
        before_text=before[-BREAK_TEXT_CHARS:],
        reason=reason,
    )


# --- one conversation, two ways ----------------------------------------------------------------


def chat_settings(eos_token_id: int) -> dict:
    """Greedy, every filter off, stopping at eos as MiniMind's chat eval does."""
    return {**GREEDY, "eos_token_id": eos_token_id}


def render_prompt(tokenizer: Tokenizer, template: str, messages: list[dict]) -> list[int]:
    """The conversation's ids as eval_llm.py builds them: the whole history, then the assistant."""
    text = tokenizer.chat_prompt(messages, add_generation_prompt=True, template=template)
    return tokenizer.encode(text)


def check_fits(prompt_len: int, new_tokens: int, max_positions: int, turn: int) -> None:
    """A conversation past the model's rotary table is a config error, not a shape traceback."""
    if prompt_len + new_tokens > max_positions:
        raise MminferError(
            f"turn {turn} of config key 'conversation.questions' has a prompt of {prompt_len} "
            f"tokens, and 'conversation.new_tokens' ({new_tokens}) more pass the model's "
            f"max_position_embeddings {max_positions}: ask fewer or shorter questions, or fewer "
            "new tokens."
        )


def generate_turn(model, prompt_ids: list[int], cache, new_tokens: int, settings: dict, device):
    """(new ids, the returned cache, the forward calls' record) of one answer through generate."""
    input_ids = torch.tensor([prompt_ids], dtype=torch.long, device=device)
    recorder = ForwardRecorder(keep_logits=True)
    with recorder.watching(model):
        output = model.generate(
            input_ids,
            max_new_tokens=new_tokens,
            past_key_values=cache,
            return_kv=True,
            **settings,
        )
    ids = output["generated_ids"][0, len(prompt_ids) :].tolist()
    return ids, output["past_kv"], recorder


def logit_gaps(
    logits_a: list[torch.Tensor],
    logits_b: list[torch.Tensor],
    difference: FirstDifference | None,
) -> tuple[float, float]:
    """(largest |a - b|, largest |b|) over the steps up to and with the first different token.

    After it the two ways see different contexts, so the steps after it are not compared.
    """
    steps = min(len(logits_a), len(logits_b))
    if difference is not None:
        steps = difference.step + 1
    gap = 0.0
    scale = 0.0
    for step in range(steps):
        gap = max(gap, float((logits_a[step] - logits_b[step]).abs().max()))
        scale = max(scale, float(logits_b[step].abs().max()))
    return gap, scale


def time_turn(
    model,
    prompt_ids: list[int],
    carried,
    reused: int,
    settings: dict,
    warmup: int,
    runs: int,
    max_runs: int,
    device,
    clock: Callable[[], float] | None = None,
) -> TurnTiming:
    """Time to first token both ways: generate of one new token, from scratch or the cut cache.

    The carry side's clock includes cutting the cache. Rounds alternate (carry, recompute) after
    warm-ups of both, with more rounds while a doubt remains (mminfer.timing).
    """
    clock = clock or synced_clock(device)
    input_ids = torch.tensor([prompt_ids], dtype=torch.long, device=device)

    def measure(carry: bool) -> float:
        start = clock()
        cache = None
        if carry:
            cache = truncate_cache(carried, reused)
        model.generate(input_ids, max_new_tokens=1, past_key_values=cache, **settings)
        return clock() - start

    measured = interleaved_runs(measure, warmup, runs, max_runs)
    carry_s = measured["with_cache_runs_s"]
    recompute_s = measured["without_cache_runs_s"]
    doubts = doubts_about(carry_s, recompute_s)
    carry_median = statistics.median(carry_s)
    recompute_median = statistics.median(recompute_s)
    return TurnTiming(
        carry_s=carry_median,
        recompute_s=recompute_median,
        saved_s=recompute_median - carry_median,
        speedup=recompute_median / carry_median,
        cv_carry=coefficient_of_variation(carry_s),
        cv_recompute=coefficient_of_variation(recompute_s),
        runs_done=len(carry_s),
        extra_rounds=len(carry_s) - runs,
        doubts=doubts,
        verdict=verdict_of(doubts),
        carry_runs_s=carry_s,
        recompute_runs_s=recompute_s,
        carry_warmup_s=measured["with_cache_warmup_s"],
        recompute_warmup_s=measured["without_cache_warmup_s"],
    )


def worst_verdict(verdicts: list[str]) -> str:
    """ "untrusted" over "noisy" over "ok"; "none" when nothing was timed."""
    for verdict in ("untrusted", "noisy", "ok"):
        if verdict in verdicts:
            return verdict
    return "none"


def hold_conversation(
    model,
    tokenizer: Tokenizer,
    template: str,
    questions: list[str],
    new_tokens: int,
    warmup: int,
    runs: int,
    max_runs: int,
    device,
    max_positions: int,
    clock: Callable[[], float] | None = None,
) -> list[ConversationTurn]:
    """Every turn of the conversation, recomputed and carried (see the module's docstring).

    Each way keeps its own history (its own answers, decoded as eval_llm.py does), so a way that
    answered differently goes on with its own conversation; ``same_prompt`` says whether the two
    prompts of a turn were the same ids.
    """
    settings = chat_settings(tokenizer.eos_token_id)
    dtype = dtype_name(next(model.parameters()).dtype)
    rtol = LOGIT_RTOL.get(dtype, LOGIT_RTOL["bfloat16"])
    history_recompute: list[dict] = []
    history_carry: list[dict] = []
    carried = None  # the carry way's cache from the previous turn
    held_ids: list[int] = []  # the ids it holds
    previous_prompt_len = 0
    previous_answer = ""
    turns = []
    for number, question in enumerate(questions, start=1):
        history_recompute.append({"role": "user", "content": question})
        history_carry.append({"role": "user", "content": question})
        prompt = render_prompt(tokenizer, template, history_recompute)
        prompt_carry = render_prompt(tokenizer, template, history_carry)
        check_fits(max(len(prompt), len(prompt_carry)), new_tokens, max_positions, number)

        held_before = len(held_ids)
        shared = common_prefix(held_ids, prompt_carry)
        reused = min(shared, len(prompt_carry) - 1)  # generate must be fed at least one token
        broke = prefix_break(
            tokenizer, held_ids, prompt_carry, previous_prompt_len, previous_answer
        )
        timing = None
        if reused > 0:
            timing = time_turn(
                model,
                prompt_carry,
                carried,
                reused,
                settings,
                warmup,
                runs,
                max_runs,
                device,
                clock,
            )

        ids, _, recompute = generate_turn(model, prompt, None, new_tokens, settings, device)
        cut = truncate_cache(carried, reused) if carried is not None else None
        ids_carry, carried, carry = generate_turn(
            model, prompt_carry, cut, new_tokens, settings, device
        )
        held_ids = (prompt_carry + ids_carry)[: cache_length(carried)]
        previous_prompt_len = len(prompt_carry)

        difference = first_difference(ids_carry, ids, carry.last_logits, recompute.last_logits)
        gap, scale = logit_gaps(carry.last_logits, recompute.last_logits, difference)
        prompt_len = len(prompt)
        formulas = {
            "first_recompute": prompt_len,
            "first_carry": len(prompt_carry) - reused,
            "recompute": fed_with_cache_formula(prompt_len, len(ids)),
            "carry": fed_with_cache_formula(len(prompt_carry) - reused, len(ids_carry)),
        }
        fed = {
            "first_recompute": recompute.fed_per_call[0],
            "first_carry": carry.fed_per_call[0],
            "recompute": sum(recompute.fed_per_call),
            "carry": sum(carry.fed_per_call),
        }
        answer = tokenizer.decode(ids, skip_special_tokens=True)
        answer_carry = tokenizer.decode(ids_carry, skip_special_tokens=True)
        history_recompute.append({"role": "assistant", "content": answer})
        history_carry.append({"role": "assistant", "content": answer_carry})
        previous_answer = answer_carry
        turns.append(
            ConversationTurn(
                turn=number,
                question=question,
                prompt_len=prompt_len,
                held=held_before,
                common_prefix=shared,
                reused=reused,
                new_tokens=len(ids),
                new_tokens_carry=len(ids_carry),
                fed_first_recompute=fed["first_recompute"],
                fed_first_carry=fed["first_carry"],
                fed_recompute=fed["recompute"],
                fed_carry=fed["carry"],
                formula_first_recompute=formulas["first_recompute"],
                formula_first_carry=formulas["first_carry"],
                formula_recompute=formulas["recompute"],
                formula_carry=formulas["carry"],
                fed_match=fed == formulas,
                saved_tokens=fed["recompute"] - fed["carry"],
                same_prompt=prompt == prompt_carry,
                same_ids=ids == ids_carry,
                ids=ids,
                ids_carry=ids_carry,
                max_abs_logit_diff=gap,
                max_abs_logit=scale,
                close_logits=gap <= rtol * scale,
                first_difference=difference,
                answer=answer,
                prefix_break=broke,
                timing=timing,
            )
        )
    return turns


# --- a prompt many users share -----------------------------------------------------------------


def check_shared_settings(users: int, shared_tokens: int, prompt_len: int, new_tokens: int):
    """The shared-prefix settings must describe B >= 1 users sharing 0 < S < P tokens."""
    if users < 1:
        raise MminferError(f"config key 'conversation.users' must be at least 1, got {users}.")
    if not 0 < shared_tokens < prompt_len:
        raise MminferError(
            f"config key 'conversation.shared_tokens' ({shared_tokens}) must be above 0 and below "
            f"'conversation.user_prompt_tokens' ({prompt_len}): each user adds tokens of their own."
        )
    if new_tokens < 1:
        raise MminferError(
            f"config key 'conversation.user_new_tokens' must be at least 1, got {new_tokens}."
        )


def shared_prefix_users(
    model,
    config,
    users: int,
    shared_tokens: int,
    prompt_len: int,
    new_tokens: int,
    seed: int,
    device,
) -> SharedPrefix:
    """The KV bytes generate holds for B users sharing S prompt tokens, against sharing them.

    Each user's prompt is the same S random ids, then P - S of their own; the batch is generated
    greedily for N tokens with return_kv=True and the returned cache's bytes are summed.
    """
    check_shared_settings(users, shared_tokens, prompt_len, new_tokens)
    if prompt_len + new_tokens > config.max_position_embeddings:
        raise MminferError(
            f"config keys 'conversation.user_prompt_tokens' + 'conversation.user_new_tokens' "
            f"({prompt_len} + {new_tokens}) pass the model's max_position_embeddings "
            f"{config.max_position_embeddings}."
        )
    prefix = random_tokens(config.vocab_size, shared_tokens, seed)  # (1, S)
    own = random_tokens(config.vocab_size, prompt_len - shared_tokens, seed + 1, batch=users)
    input_ids = torch.cat([prefix.expand(users, shared_tokens), own], dim=1).to(device)
    output = model.generate(input_ids, max_new_tokens=new_tokens, return_kv=True, **GREEDY)
    cache = output["past_kv"]
    first_k = cache[0][0]  # (B, held, kv_heads, head_dim)
    held = cache_length(cache)
    measured = cache_tensor_bytes(cache)
    element = first_k.element_size()
    formula = kv_formula_bytes(
        config.num_hidden_layers,
        held,
        config.num_key_value_heads,
        config.head_dim,
        element,
        users,
    )
    identical = True
    for k, v in cache:
        for row in range(1, users):
            same_k = torch.equal(k[row, :shared_tokens], k[0, :shared_tokens])
            same_v = torch.equal(v[row, :shared_tokens], v[0, :shared_tokens])
            identical = identical and same_k and same_v
    per_token = measured // (users * held)
    shared_bound_tokens = shared_tokens + users * (held - shared_tokens)
    free_bytes, free_source = available_bytes(device)
    users_copied = None
    users_shared = None
    if free_bytes is not None:
        users_copied = sequences_that_fit(free_bytes, per_token * (prompt_len + new_tokens))
        users_shared = sequences_that_fit(
            free_bytes - per_token * shared_tokens,
            per_token * (prompt_len - shared_tokens + new_tokens),
        )
    return SharedPrefix(
        users=users,
        shared_tokens=shared_tokens,
        prompt_len=prompt_len,
        new_tokens=new_tokens,
        seed=seed,
        held_tokens=held,
        k_shape=list(first_k.shape),
        measured_bytes=measured,
        formula_bytes=formula,
        matches=measured == formula,
        prefix_rows_identical=identical,
        bytes_per_token=per_token,
        copied_tokens=users * held,
        shared_bound_tokens=shared_bound_tokens,
        shared_bound_bytes=shared_bound_tokens * per_token,
        copied_prefix_bytes=(users - 1) * shared_tokens * per_token,
        free_bytes=free_bytes,
        free_source=free_source,
        users_copied=users_copied,
        users_shared_bound=users_shared,
        copied_formula="B x (P + N) tokens: floor(free_bytes / (bytes_per_token x (P + N)))",
        shared_formula=(
            "S + B x (P - S + N) tokens, a bound: "
            "floor((free_bytes - S x bytes_per_token) / (bytes_per_token x (P - S + N)))"
        ),
    )


# --- the pitfalls ------------------------------------------------------------------------------


def try_generate(
    model, name: str, call: str, input_ids: torch.Tensor, cache, rows_asked: int
) -> Pitfall:
    """Ask generate for one new token greedily with ``cache``; record what happened, never raise."""
    output_shape = None
    error_type = None
    error_message = None
    try:
        output = model.generate(
            input_ids,
            max_new_tokens=1,
            past_key_values=cache,
            num_return_sequences=rows_asked,
            **GREEDY,
        )
        output_shape = list(output.shape)
    except Exception as exc:  # the pitfall is what generate raises: recorded, not raised
        error_type = type(exc).__name__
        error_message = str(exc)
    return Pitfall(
        name=name,
        call=call,
        input_len=int(input_ids.shape[1]),
        cache_len=cache_length(cache),
        cache_rows=int(cache[0][0].shape[0]),
        rows_asked=rows_asked,
        raised=error_type is not None,
        error_type=error_type,
        error_message=error_message,
        output_shape=output_shape,
    )


@torch.inference_mode()
def generate_pitfalls(model, prompt_ids: list[int], device) -> list[Pitfall]:
    """What generate does with a cache that covers the whole input, and with
    num_return_sequences=2 and a batch-1 cache of all but the last prompt token."""
    input_ids = torch.tensor([prompt_ids], dtype=torch.long, device=device)
    whole = model(input_ids, use_cache=True).past_key_values
    all_but_last = truncate_cache(whole, len(prompt_ids) - 1)
    return [
        try_generate(
            model,
            CACHE_COVERS_INPUT,
            "generate(prompt, past_key_values=the prompt's whole cache)",
            input_ids,
            whole,
            1,
        ),
        try_generate(
            model,
            RETURN_SEQUENCES_WITH_BATCH1_CACHE,
            "generate(prompt, past_key_values=a batch-1 cache of all but its last token, "
            "num_return_sequences=2)",
            input_ids,
            all_but_last,
            2,
        ),
    ]


# --- the record --------------------------------------------------------------------------------


def measure_conversation(
    model,
    config,
    tokenizer: Tokenizer,
    template: str,
    template_source: str,
    tokenizer_source: str,
    questions: list[str],
    new_tokens: int,
    warmup: int,
    runs: int,
    max_runs: int,
    users: int,
    shared_tokens: int,
    user_prompt_tokens: int,
    user_new_tokens: int,
    seed: int,
    device,
    run: RunInfo,
    clock: Callable[[], float] | None = None,
) -> Conversation:
    """conversation.json: the conversation both ways, the shared prefix and the pitfalls."""
    if len(questions) < 2:
        raise MminferError(
            "config key 'conversation.questions' needs at least 2 questions: the first turn has "
            f"no cache to carry; got {len(questions)}."
        )
    if new_tokens < 1 or warmup < 0 or runs < 1:
        raise MminferError(
            "config keys 'conversation.new_tokens' and 'conversation.runs' must be at least 1 and "
            f"'conversation.warmup' at least 0; got {new_tokens}, {runs} and {warmup}."
        )
    load_before = load_average()
    turns = hold_conversation(
        model,
        tokenizer,
        template,
        questions,
        new_tokens,
        warmup,
        runs,
        max_runs,
        device,
        config.max_position_embeddings,
        clock,
    )
    shared = shared_prefix_users(
        model, config, users, shared_tokens, user_prompt_tokens, user_new_tokens, seed, device
    )
    first_prompt = render_prompt(tokenizer, template, [{"role": "user", "content": questions[0]}])
    pitfalls = generate_pitfalls(model, first_prompt, device)
    total_recompute = sum(turn.fed_recompute for turn in turns)
    total_carry = sum(turn.fed_carry for turn in turns)
    formula_recompute = sum(turn.formula_recompute for turn in turns)
    formula_carry = sum(turn.formula_carry for turn in turns)
    reused = [turn.reused for turn in turns]
    verdicts = [turn.timing.verdict for turn in turns if turn.timing is not None]
    dtype = dtype_name(next(model.parameters()).dtype)
    return Conversation(
        questions=list(questions),
        new_tokens=new_tokens,
        eos_token_id=tokenizer.eos_token_id,
        template=template_source,
        tokenizer=tokenizer_source,
        turns=turns,
        total_fed_recompute=total_recompute,
        total_fed_carry=total_carry,
        formula_total_recompute=formula_recompute,
        formula_total_carry=formula_carry,
        totals_match=(total_recompute, total_carry) == (formula_recompute, formula_carry),
        total_saved_tokens=total_recompute - total_carry,
        prompt_tokens_recompute=sum(turn.prompt_len for turn in turns),
        prompt_tokens_carry=sum(turn.fed_first_carry for turn in turns),
        saved_grows=all(later > earlier for earlier, later in itertools.pairwise(reused)),
        prefix_breaks=sum(turn.prefix_break is not None for turn in turns),
        same_answers=all(turn.same_ids and turn.close_logits for turn in turns),
        logit_rtol=LOGIT_RTOL.get(dtype, LOGIT_RTOL["bfloat16"]),
        warmup=warmup,
        runs=runs,
        max_runs=max(runs, max_runs),
        order=ORDER,
        noisy_cv=NOISY_CV,
        timing_verdict=worst_verdict(verdicts),
        threads=torch.get_num_threads(),
        load_before=load_before,
        load_after=load_average(),
        shared_prefix=shared,
        pitfalls=pitfalls,
        run=run,
    )


# --- the report's facts --------------------------------------------------------------------------


def visible(text: str) -> str:
    """Text shown inside a Markdown code span: newlines and tabs escaped, backticks and pipes
    replaced, so that one line of the report shows exactly which characters differ."""
    shown = []
    for char in text:
        if char.isprintable():
            shown.append(char)
        else:
            shown.append(char.encode("unicode_escape").decode("ascii"))  # "\n", "\t"
    escaped = "".join(shown)
    return escaped.replace("`", "'").replace("|", "¦")


def rounding_sized(difference: FirstDifference, rtol: float) -> bool:
    """Is the ways' logit difference at the first different token no larger than rounding?"""
    return difference.max_abs_logit_diff <= rtol * (1.0 + difference.max_abs_logit)


def conversation_facts(record: Conversation) -> dict:
    """conversation.json's facts and verdicts for the report's section (report/sections).

    Whether the tokens fed follow their formulas and the answers are the same, the share of tokens
    the carried cache saves, each prefix break with its texts made visible, each timed turn, the
    shared prefix's saving and the pitfalls (each error's first line).
    """
    turns = record.turns
    diverged = []
    for turn in turns:
        if turn.same_ids and turn.close_logits:
            continue
        difference = turn.first_difference
        diverged.append(
            {
                "turn": turn,
                "difference": difference,
                "rounding_sized": (
                    None if difference is None else rounding_sized(difference, record.logit_rtol)
                ),
            }
        )
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
    saved_s = [turn.timing.saved_s for turn in timed]
    shared = record.shared_prefix
    users_gain = None
    if shared.users_copied and shared.users_shared_bound is not None:
        users_gain = shared.users_shared_bound / shared.users_copied
    pitfalls = []
    for pitfall in record.pitfalls:
        message = None
        if pitfall.error_message is not None:
            message = visible(pitfall.error_message.splitlines()[0][:160])
        pitfalls.append({"pitfall": pitfall, "message": message})
    run = record.run
    last = turns[-1]
    return {
        "record": record,
        "turn_count": len(turns),
        "fed_match": all(turn.fed_match for turn in turns) and record.totals_match,
        "saved_share": record.total_saved_tokens / record.total_fed_recompute,
        "prompt_ratio": record.prompt_tokens_recompute / record.prompt_tokens_carry,
        "last_turn": last,
        "last_reused_share": last.reused / last.prompt_len,
        "diverged": diverged,
        "max_abs_logit_diff": max(turn.max_abs_logit_diff for turn in turns),
        "logits_equal": all(turn.max_abs_logit_diff == 0 for turn in turns),
        "breaks": breaks,
        "timed": timed,
        "timing_trusted": record.timing_verdict == "ok",
        "timing_untrusted": record.timing_verdict == "untrusted",
        "ttft_saved_grows": len(saved_s) > 1 and all(b > a for a, b in itertools.pairwise(saved_s)),
        "shared": shared,
        "shared_saving": shared.copied_tokens / shared.shared_bound_tokens,
        "users_gain": users_gain,
        "pitfalls": pitfalls,
        "all_pitfalls_raised": all(pitfall.raised for pitfall in record.pitfalls),
        "device": run.device_name if run.device == "cuda" else "cpu",
        "dtype": run.dtype,
        "backend": run.backend,
        "threads": record.threads,
    }
