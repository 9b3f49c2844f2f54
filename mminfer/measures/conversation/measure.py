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
from collections.abc import Callable

import torch

from mminfer.errors import MminferError
from mminfer.measures.conversation.conversation import (
    Conversation,
    ConversationSettings,
    ConversationTurn,
    Pitfall,
    PrefixBreak,
    SharedPrefix,
    TurnTiming,
    taken_together,
)
from mminfer.measures.conversation.decide import decide_carry_faster
from mminfer.model.cachebytes import (
    cache_tensor_bytes,
    config_formula_bytes,
    random_tokens,
    sequences_that_fit,
)
from mminfer.model.counting import ForwardRecorder, fed_with_cache_formula
from mminfer.model.generation import GREEDY, first_difference
from mminfer.model.loading import dtype_name
from mminfer.model.tokenizer import Tokenizer
from mminfer.records import FirstDifference, RunInfo, rounding_tolerance, within_rounding
from mminfer.records.interval import median_interval
from mminfer.records.spread import NOISY_CV
from mminfer.timing.ab import (
    A_NOT_FASTER,
    A_SPREAD,
    B_SPREAD,
    ABTiming,
    Rounds,
    Sides,
    time_ab,
)
from mminfer.timing.clock import clock_name
from mminfer.timing.machine import available_bytes, load_average

# The pitfalls, by name: what is asked of generate, and the lesson the report states.
CACHE_COVERS_INPUT = "cache_covers_input"
RETURN_SEQUENCES_WITH_BATCH1_CACHE = "return_sequences_with_batch1_cache"

BREAK_TEXT_CHARS = 12  # characters shown either side of a prefix break

ORDER = "interleaved: warm-ups of both, then rounds of (carry, recompute)"
CARRY_SIDES = Sides(  # the carried cache as side a, its doubts in time.json's words
    doubts={
        A_NOT_FASTER: "cache_not_faster",
        A_SPREAD: "with_cache_spread",
        B_SPREAD: "without_cache_spread",
    },
    contradictions=("cache_not_faster",),
)


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


def holds_replacement(tokenizer: Tokenizer, ids: list[int]) -> bool:
    """Whether ``ids`` hold U+FFFD's own encoding (its bytes, as the tokenizer writes them)."""
    replacement = tokenizer.encode("\ufffd")
    for start in range(len(ids) - len(replacement) + 1):
        if ids[start : start + len(replacement)] == replacement:
            return True
    return False


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
    if "\ufffd" in answer_text and holds_replacement(tokenizer, prompt[position : position + 4]):
        reason = "replacement_character"
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
    *,
    model,
    prompt_ids: list[int],
    carried,
    reused: int,
    settings: dict,
    rounds: Rounds,
    device,
    clock: Callable[[], float] | None = None,
) -> TurnTiming:
    """Time to first token both ways: generate of one new token, from scratch or the cut cache.

    The carry side's clock includes cutting the cache. Rounds alternate (carry, recompute) after
    warm-ups of both, with more rounds while a doubt remains (mminfer.timing.ab).
    """
    input_ids = torch.tensor([prompt_ids], dtype=torch.long, device=device)

    def first_token(carry: bool) -> None:  # side a: the carried cache
        cache = None
        if carry:
            cache = truncate_cache(carried, reused)
        model.generate(input_ids, max_new_tokens=1, past_key_values=cache, **settings)

    timed = time_ab(
        work=first_token,
        sides=CARRY_SIDES,
        device=device,
        rounds=rounds,
        clock=clock,
    )
    return turn_timing(timed)


def turn_timing(timed: ABTiming) -> TurnTiming:
    """One turn's timing from the A/B timing of carry (side a) against recompute (side b): the
    medians and their intervals, the per-round time saved (recompute - carry) and speedup
    (recompute / carry) with theirs, the speedup's decision, the contention."""
    saved = [recompute - carry for carry, recompute in zip(timed.a_runs_s, timed.b_runs_s)]
    return TurnTiming(
        carry_s=timed.a_s,
        recompute_s=timed.b_s,
        saved_s=timed.b_s - timed.a_s,
        speedup=timed.b_s / timed.a_s,
        carry_interval=timed.a_interval,
        recompute_interval=timed.b_interval,
        saved_interval=median_interval(saved, timed.ratio_interval.level),
        speedup_interval=timed.ratio_interval,
        carry_faster=decide_carry_faster(
            timed.b_runs_s, timed.a_runs_s, timed.runs, timed.max_runs
        ),
        cv_carry=timed.cv_a,
        cv_recompute=timed.cv_b,
        runs_done=timed.runs_done,
        extra_rounds=timed.extra_rounds,
        doubts=timed.doubts,
        verdict=timed.verdict,
        carry_runs_s=timed.a_runs_s,
        recompute_runs_s=timed.b_runs_s,
        carry_warmup_s=timed.a_warmup_s,
        recompute_warmup_s=timed.b_warmup_s,
        contention=timed.contention,
    )


def worst_verdict(verdicts: list[str]) -> str:
    """The worst of the timed turns' verdicts: untrusted, then noisy, then ok; none if none."""
    for verdict in ("untrusted", "noisy", "ok"):
        if verdict in verdicts:
            return verdict
    return "none"


def hold_conversation(
    model,
    tokenizer: Tokenizer,
    template: str,
    settings: ConversationSettings,
    device,
    max_positions: int,
    clock: Callable[[], float] | None = None,
) -> list[ConversationTurn]:
    """Every turn of the conversation, recomputed and carried (see the module's docstring).

    Each way keeps its own history (its own answers, decoded as eval_llm.py does), so a way that
    answered differently goes on with its own conversation; ``same_prompt`` says whether the two
    prompts of a turn were the same ids. ``settings``: its questions, new tokens and rounds.
    """
    new_tokens = settings.new_tokens
    rounds = Rounds(warmup=settings.warmup, runs=settings.runs, max_runs=settings.max_runs)
    generating = chat_settings(tokenizer.eos_token_id)
    dtype = dtype_name(next(model.parameters()).dtype)
    history_recompute: list[dict] = []
    history_carry: list[dict] = []
    carried = None  # the carry way's cache from the previous turn
    held_ids: list[int] = []  # the ids it holds
    previous_prompt_len = 0
    previous_answer = ""
    turns = []
    for number, question in enumerate(settings.questions, start=1):
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
                model=model,
                prompt_ids=prompt_carry,
                carried=carried,
                reused=reused,
                settings=generating,
                rounds=rounds,
                device=device,
                clock=clock,
            )

        ids, _, recompute = generate_turn(model, prompt, None, new_tokens, generating, device)
        cut = truncate_cache(carried, reused) if carried is not None else None
        ids_carry, carried, carry = generate_turn(
            model, prompt_carry, cut, new_tokens, generating, device
        )
        held_ids = (prompt_carry + ids_carry)[: cache_length(carried)]
        previous_prompt_len = len(prompt_carry)

        difference = first_difference(
            ids_with=ids_carry,
            ids_without=ids,
            logits_with=carry.last_logits,
            logits_without=recompute.last_logits,
        )
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
        # as eval_llm.py feeds an answer back: decoded, special tokens skipped, and an id past
        # the tokenizer's end dropped as the tokenizers library drops it
        answer = tokenizer.decode(ids, skip_special_tokens=True, mark_past_end=False)
        answer_carry = tokenizer.decode(ids_carry, skip_special_tokens=True, mark_past_end=False)
        history_recompute.append({"role": "assistant", "content": answer})
        history_carry.append({"role": "assistant", "content": answer_carry})
        previous_answer = answer_carry
        turns.append(
            ConversationTurn(
                turn=number,
                question=question,
                prompt_len=prompt_len,
                prompt_len_carry=len(prompt_carry),
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
                close_logits=within_rounding(gap, scale, dtype),
                first_difference=difference,
                answer=tokenizer.decode(ids, skip_special_tokens=True),  # ⟨id N⟩ shown
                ids_past_tokenizer=tokenizer.past_end(ids) + tokenizer.past_end(ids_carry),
                prefix_break=broke,
                timing=timing,
            )
        )
    return turns


# --- a prompt many users share -----------------------------------------------------------------


def check_shared_settings(
    users: int, shared_tokens: int, prompt_len: int, new_tokens: int, max_positions: int
) -> None:
    """The shared-prefix settings must describe B >= 1 users sharing 0 < S < P tokens, with
    P + N within the model's rotary table."""
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
    if prompt_len + new_tokens > max_positions:
        raise MminferError(
            f"config keys 'conversation.user_prompt_tokens' + 'conversation.user_new_tokens' "
            f"({prompt_len} + {new_tokens}) pass the model's max_position_embeddings "
            f"{max_positions}."
        )


def prefix_rows_identical(cache, shared_tokens: int) -> bool:
    """Whether every row's first ``shared_tokens`` keys and values equal row 0's, in every layer."""
    for k, v in cache:
        for row in range(1, k.shape[0]):
            if not torch.equal(k[row, :shared_tokens], k[0, :shared_tokens]):
                return False
            if not torch.equal(v[row, :shared_tokens], v[0, :shared_tokens]):
                return False
    return True


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
    check_shared_settings(
        users, shared_tokens, prompt_len, new_tokens, config.max_position_embeddings
    )
    prefix = random_tokens(vocab_size=config.vocab_size, tokens=shared_tokens, seed=seed)  # (1, S)
    own = random_tokens(
        vocab_size=config.vocab_size, tokens=prompt_len - shared_tokens, seed=seed + 1, batch=users
    )
    input_ids = torch.cat([prefix.expand(users, shared_tokens), own], dim=1).to(device)
    output = model.generate(input_ids, max_new_tokens=new_tokens, return_kv=True, **GREEDY)
    cache = output["past_kv"]
    first_k = cache[0][0]  # (B, held, kv_heads, head_dim)
    k_shape = list(first_k.shape)
    held = cache_length(cache)
    measured = cache_tensor_bytes(cache)
    element = first_k.element_size()
    formula = config_formula_bytes(
        config=config, tokens=held, bytes_per_element=element, batch=users
    )
    identical = prefix_rows_identical(cache, shared_tokens)
    per_token = measured // (users * held)
    shared_bound_tokens = shared_tokens + users * (held - shared_tokens)
    # the free memory without the B users' cache: on CUDA it is held until its last reference goes
    del output, cache, first_k
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
        k_shape=k_shape,
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
    except MminferError:  # a stop of mminfer's own (finite_logits' NaN, say) is no pitfall
        raise
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
    *,
    loaded,
    tokenizer: Tokenizer,
    template: str,
    template_source: str,
    tokenizer_source: str,
    settings: ConversationSettings,
    run: RunInfo,
    clock: Callable[[], float] | None = None,
) -> Conversation:
    """conversation.json: the conversation both ways, the shared prefix and the pitfalls.

    ``loaded``: the model opened (mminfer.model.loading.LoadedModel: its model, config, device).
    """
    model = loaded.model
    config = loaded.config
    device = loaded.device
    if len(settings.questions) < 2:
        raise MminferError(
            "config key 'conversation.questions' needs at least 2 questions: the first turn has "
            f"no cache to carry; got {len(settings.questions)}."
        )
    if settings.new_tokens < 1 or settings.warmup < 0 or settings.runs < 1:
        raise MminferError(
            "config keys 'conversation.new_tokens' and 'conversation.runs' must be at least 1 and "
            f"'conversation.warmup' at least 0; got {settings.new_tokens}, {settings.runs} and "
            f"{settings.warmup}."
        )
    check_shared_settings(  # before the conversation is timed, not after
        settings.users,
        settings.shared_tokens,
        settings.user_prompt_tokens,
        settings.user_new_tokens,
        config.max_position_embeddings,
    )
    load_before = load_average()
    turns = hold_conversation(
        model,
        tokenizer,
        template,
        settings,
        device,
        config.max_position_embeddings,
        clock,
    )
    shared = shared_prefix_users(
        model,
        config,
        settings.users,
        settings.shared_tokens,
        settings.user_prompt_tokens,
        settings.user_new_tokens,
        settings.seed,
        device,
    )
    first_question = [{"role": "user", "content": settings.questions[0]}]
    first_prompt = render_prompt(tokenizer, template, first_question)
    pitfalls = generate_pitfalls(model, first_prompt, device)
    total_recompute = sum(turn.fed_recompute for turn in turns)
    total_carry = sum(turn.fed_carry for turn in turns)
    formula_recompute = sum(turn.formula_recompute for turn in turns)
    formula_carry = sum(turn.formula_carry for turn in turns)
    reused = [turn.reused for turn in turns]
    verdicts = [turn.timing.verdict for turn in turns if turn.timing is not None]
    dtype = dtype_name(next(model.parameters()).dtype)
    return Conversation(
        questions=list(settings.questions),
        new_tokens=settings.new_tokens,
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
        logit_rtol=rounding_tolerance(dtype),
        warmup=settings.warmup,
        runs=settings.runs,
        max_runs=max(settings.runs, settings.max_runs),
        order=ORDER,
        noisy_cv=NOISY_CV,
        timing_verdict=worst_verdict(verdicts),
        contention=taken_together(
            [turn.timing.contention for turn in turns if turn.timing is not None]
        ),
        threads=torch.get_num_threads(),
        load_before=load_before,
        load_after=load_average(),
        clock=clock_name(),
        shared_prefix=shared,
        pitfalls=pitfalls,
        run=run,
    )
