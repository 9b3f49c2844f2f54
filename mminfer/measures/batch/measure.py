"""Batching is the same result cheaply, if the mask is right -> batch.json.

Step 1's prompt and shorter prompts cut from the validation documents after it, left-padded with
the tokenizer's pad id and an ``attention_mask`` (as MiniMind's GRPO and PPO trainers pad), are
generated greedily in one batch (top_k=0, top_p=1.0, eos None); each row is compared with the same
prompt generated alone: the same new ids? the first step they part, the largest logit gap up to
it. The same batch without the mask (the pads read as text) and padded on the right (the mistake
MiniMind's issue #751 names: the last position of a short row is a pad) are compared the same way.
Positions in MiniMind's generate come from the cache's length, not from the mask: a left-padded
row's tokens sit ``pad`` positions later than alone, and only RoPE's relative form keeps its
attention the same (up to rounding).

The batch is timed against its rows one after another (interleaved after warm-ups, as time.json).
In half precision the mask's -1e9 is cast to the model's dtype: float16 cannot hold it (-inf), so a
query that sees only pads (the first positions of a left-padded row) gets NaN, which reaches the
row's real tokens in the next layer; bfloat16 holds it. What generate does there is recorded, as a
measured pitfall, never raised.
"""

from __future__ import annotations

import torch

from mminfer.errors import MminferError
from mminfer.io import read_jsonl_field
from mminfer.measures.batch.batch import Batch, BatchCase, BatchRow, BatchTiming, HalfPrecisionMask
from mminfer.measures.batch.decide import decide_batch_faster
from mminfer.model.counting import ForwardRecorder
from mminfer.model.finite import finite_logits, model_named
from mminfer.model.generation import GREEDY
from mminfer.model.prompts import check_length, pretrain_prompt
from mminfer.model.tokenizer import Tokenizer
from mminfer.records import PretrainPrompt, RunInfo, rates
from mminfer.timing.ab import A_SPREAD, B_SPREAD, ABTiming, Rounds, Sides, time_ab

MASK_VALUE = -1e9  # MiniMind's attention: scores += (1 - mask) * -1e9
HALF_DTYPES = ("float16", "bfloat16")
LENGTH_KEYS = "cache.prompt_tokens + batch.new_tokens"
PROMPTS_KEYS = "config keys 'batch.prompts' and 'batch.shortest'"
BATCH_SIDES = Sides(  # the batch as side a; a batch slower than its rows is a finding, not noise
    doubts={
        A_SPREAD: "batch_spread",
        B_SPREAD: "sequential_spread",
    },
    contradictions=(),
)


def pad_id(tokenizer: Tokenizer) -> int:
    """The tokenizer's pad id (tokenizer_config.json's pad_token), as MiniMind's trainers pad."""
    pad = tokenizer.config.get("pad_token")
    if isinstance(pad, dict):
        pad = pad.get("content")
    token_id = tokenizer.backend.token_to_id(pad) if isinstance(pad, str) else None
    if token_id is None:
        raise MminferError(
            f"{tokenizer.folder / 'tokenizer_config.json'} names no pad_token the tokenizer knows "
            f"({pad!r}; config key 'tokenizer'): batch.json pads its prompts with it, as "
            "MiniMind's trainers do."
        )
    return token_id


def prompt_lengths(prompts: int, shortest: int, longest: int) -> list[int]:
    """The other prompts' token counts (without bos): evenly from ``shortest`` to below
    ``longest`` (step 1's), shortest first."""
    if prompts < 2 or not 1 <= shortest < longest:
        raise MminferError(
            f"{PROMPTS_KEYS} ask for {prompts} prompts from {shortest} tokens; a batch needs at "
            f"least 2 prompts, and shortest must be at least 1 and below step 1's prompt "
            f"({longest} tokens, config key 'cache.prompt_tokens')."
        )
    others = prompts - 1
    return [round(shortest + (longest - shortest) * i / others) for i in range(others)]


def batch_prompts(
    tokenizer: Tokenizer,
    val_path,
    docs: int,
    prompt_tokens: int,
    prompts: int,
    shortest: int,
) -> list[list[int]]:
    """Step 1's prompt first, then ``prompts - 1`` shorter ones, each [bos] + a slice of the text of
    the documents after step 1's ``docs`` (joined with spaces), one slice after another."""
    first = pretrain_prompt(tokenizer, val_path, docs, prompt_tokens)
    lengths = prompt_lengths(prompts, shortest, prompt_tokens)
    texts = read_jsonl_field(val_path, "text", kind="validation data")[docs:]
    later = tokenizer.encode(" ".join(str(text) for text in texts))
    if len(later) < sum(lengths):
        raise MminferError(
            f"the validation documents after the first {docs} of {val_path} have {len(later)} "
            f"tokens; {PROMPTS_KEYS} ask for {sum(lengths)} ({lengths}). Ask for fewer or "
            "shorter prompts, or give a validation file with more documents."
        )
    result = [first]
    start = 0
    for length in lengths:
        result.append([tokenizer.bos_token_id] + later[start : start + length])
        start += length
    return result


def padded(prompts: list[list[int]], pad: int, left: bool, device):
    """(input_ids, attention_mask), both (rows, longest): pads before (left) or after each."""
    longest = max(len(ids) for ids in prompts)
    rows = []
    masks = []
    for ids in prompts:
        pads = longest - len(ids)
        if left:
            rows.append([pad] * pads + ids)
            masks.append([0] * pads + [1] * len(ids))
        else:
            rows.append(ids + [pad] * pads)
            masks.append([1] * len(ids) + [0] * pads)
    input_ids = torch.tensor(rows, dtype=torch.long, device=device)
    mask = torch.tensor(masks, dtype=torch.long, device=device)
    return input_ids, mask


@torch.inference_mode()
def recorded_greedy(model, input_ids, attention_mask, new_tokens: int):
    """(each row's new ids, each step's (rows, vocab) logits) of one greedy generate."""
    recorder = ForwardRecorder(keep_logits=True)
    with recorder.watching(model):
        output = model.generate(
            input_ids, attention_mask=attention_mask, max_new_tokens=new_tokens, **GREEDY
        )
    return output[:, input_ids.shape[1] :].tolist(), recorder.last_logits


def compared_row(
    ids: list[int],
    logits: list[torch.Tensor],
    alone_ids: list[int],
    alone_logits: list[torch.Tensor],
    prompt_len: int,
    pad: int,
) -> BatchRow:
    """One batch row (its ids, its (vocab,) logits per step) against the prompt alone."""
    divergence = None
    for step, (a, b) in enumerate(zip(ids, alone_ids)):
        if a != b:
            divergence = step
            break
    compared = len(ids) if divergence is None else divergence + 1  # later steps see other text
    finite = all(bool(torch.isfinite(step_logits).all()) for step_logits in logits)
    gaps = [float((logits[s] - alone_logits[s]).abs().max()) for s in range(compared)]
    return BatchRow(
        prompt_len=prompt_len,
        pad=pad,
        same_ids=ids == alone_ids,
        first_divergence=divergence,
        max_logit_diff=max(gaps) if finite else None,
        max_abs_logit=max(float(alone_logits[s].abs().max()) for s in range(compared)),
        finite=finite,
    )


def compared_rows(prompts, batch_ids, batch_logits, alone) -> list[BatchRow]:
    """Every row of a batch generation against its prompt generated alone."""
    longest = max(len(ids) for ids in prompts)
    rows = []
    for row, ids in enumerate(prompts):
        alone_ids, alone_logits = alone[row]  # a batch of one
        row_logits = [step[row] for step in batch_logits]
        rows.append(
            compared_row(
                batch_ids[row],
                row_logits,
                alone_ids[0],
                [step[0] for step in alone_logits],
                len(ids),
                longest - len(ids),
            )
        )
    return rows


def time_batch(*, model, prompts, pad: int, new_tokens: int, rounds: Rounds, device) -> BatchTiming:
    """The left-padded batch with its mask against its rows one after another, interleaved."""
    input_ids, mask = padded(prompts, pad, True, device)
    alone = [torch.tensor([ids], dtype=torch.long, device=device) for ids in prompts]

    @torch.inference_mode()
    def batch_or_rows(batched: bool) -> None:  # side a: the batch
        if batched:
            model.generate(input_ids, attention_mask=mask, max_new_tokens=new_tokens, **GREEDY)
        else:
            for ids in alone:
                model.generate(ids, max_new_tokens=new_tokens, **GREEDY)

    timed = time_ab(
        work=batch_or_rows,
        sides=BATCH_SIDES,
        device=device,
        rounds=rounds,
    )
    return batch_timing(timed, [len(ids) for ids in prompts], new_tokens)


def batch_timing(timed: ABTiming, prompt_lens: list[int], new_tokens: int) -> BatchTiming:
    """batch.json's timing from the A/B timing of the batch (side a) against its rows one after
    another (side b): the medians and their intervals, the per-round speedup's interval and its
    decision (``batch_faster``); ``prompt_lens``: each row's prompt."""
    tokens = len(prompt_lens) * new_tokens
    return BatchTiming(
        rows=len(prompt_lens),
        new_tokens=new_tokens,
        batch_s=timed.a_s,
        sequential_s=timed.b_s,
        batch_tokens_per_s=rates.tokens_per_s(tokens, timed.a_s),
        sequential_tokens_per_s=rates.tokens_per_s(tokens, timed.b_s),
        speedup=timed.b_s / timed.a_s,
        batch_interval=timed.a_interval,
        sequential_interval=timed.b_interval,
        speedup_interval=timed.ratio_interval,
        batch_faster=decide_batch_faster(
            timed.b_runs_s, timed.a_runs_s, timed.runs, timed.max_runs
        ),
        prompt_tokens_batch=len(prompt_lens) * max(prompt_lens),
        prompt_tokens_sequential=sum(prompt_lens),
        cv_batch=timed.cv_a,
        cv_sequential=timed.cv_b,
        batch_runs_s=timed.a_runs_s,
        sequential_runs_s=timed.b_runs_s,
        **timed.shared(),  # the rounds, doubts, verdict and conditions, under these names
    )


def half_precision_mask(name: str, dtype: torch.dtype, rows: list[BatchRow]) -> HalfPrecisionMask:
    """What the mask's -1e9 becomes in ``dtype``, and how many rows it left not finite."""
    value = float(torch.tensor(MASK_VALUE).to(dtype))
    fits = bool(torch.isfinite(torch.tensor(value)))
    return HalfPrecisionMask(
        dtype=name,
        mask_value=value if fits else None,
        mask_fits=fits,
        rows_not_finite=sum(not row.finite for row in rows),
        padded_rows=sum(row.pad > 0 for row in rows),
    )


def measure_batch(
    *,
    model,
    tokenizer: Tokenizer,
    prompts: list[list[int]],
    new_tokens: int,
    rounds: Rounds,
    device,
    prompt: PretrainPrompt,
    run: RunInfo,
) -> Batch:
    """batch.json (see the module's docstring); ``prompts``: :func:`batch_prompts`' rows."""
    longest = max(len(ids) for ids in prompts)
    check_length(longest + new_tokens, model.config.max_position_embeddings, LENGTH_KEYS)
    pad = pad_id(tokenizer)
    named = model_named(run.checkpoint, run.dtype)
    alone = []
    for row, ids in enumerate(prompts):  # alone: no pad, no mask; a model that overflows stops
        input_ids = torch.tensor([ids], dtype=torch.long, device=device)
        with finite_logits(model, f"{named}, batch prompt {row + 1} alone"):
            alone.append(recorded_greedy(model, input_ids, None, new_tokens))
    left_ids, left_mask = padded(prompts, pad, True, device)
    right_ids, right_mask = padded(prompts, pad, False, device)
    masked = compared_rows(prompts, *recorded_greedy(model, left_ids, left_mask, new_tokens), alone)
    no_mask = compared_rows(prompts, *recorded_greedy(model, left_ids, None, new_tokens), alone)
    right = compared_rows(
        prompts, *recorded_greedy(model, right_ids, right_mask, new_tokens), alone
    )
    half = None
    if run.dtype in HALF_DTYPES:
        half = half_precision_mask(run.dtype, next(model.parameters()).dtype, masked)
    return Batch(
        rows=masked,
        no_mask=BatchCase(rows=no_mask, changed=sum(not row.same_ids for row in no_mask)),
        right_padding=BatchCase(rows=right, changed=sum(not row.same_ids for row in right)),
        same_ids=all(row.same_ids for row in masked),
        pad_id=pad,
        new_tokens=new_tokens,
        timing=time_batch(
            model=model,
            prompts=prompts,
            pad=pad,
            new_tokens=new_tokens,
            rounds=rounds,
            device=device,
        ),
        half_precision=half,
        prompt=prompt,
        run=run,
    )
