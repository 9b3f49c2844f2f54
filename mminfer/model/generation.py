"""Greedy generation as the task specifies it, with or without the cache, and where two differ.

Every measurement that generates greedily (same/count, time, sweep, serve, conversation, batch,
repetition) uses these arguments of MiniMind's generate, so that their tokens are one another's.
"""

from __future__ import annotations

import torch

from mminfer.model.counting import ForwardRecorder
from mminfer.records import FirstDifference

# The task's greedy arguments of MiniMind's generate (top_k=0: its default of 50 is turned off).
GREEDY = {"do_sample": False, "top_k": 0, "top_p": 1.0, "eos_token_id": None}


def greedy_generate(
    *,
    model,
    prompt_ids: list[int],
    new_tokens: int,
    use_cache: bool,
    device,
    recorder: ForwardRecorder | None = None,
) -> list[int]:
    """The new token ids of one greedy generation, as the task specifies it."""
    input_ids = torch.tensor([prompt_ids], dtype=torch.long, device=device)
    recorder = recorder or ForwardRecorder()
    with recorder.watching(model):
        output = model.generate(input_ids, max_new_tokens=new_tokens, use_cache=use_cache, **GREEDY)
    return output[0, len(prompt_ids) :].tolist()


def first_divergence(ids: list[int], reference: list[int]) -> int | None:
    """The first 0-based step where ``ids`` part from ``reference`` (a length they do not share
    counts, at the shorter one's end); None where they never do."""
    for step, (a, b) in enumerate(zip(ids, reference)):
        if a != b:
            return step
    return None if len(ids) == len(reference) else min(len(ids), len(reference))


def top2_margin(logits: torch.Tensor) -> float:
    """top-1 logit minus top-2 logit of a (vocab,) vector: how close the argmax was to flipping."""
    return float(torch.topk(logits, 2).values.diff().neg())


def first_difference(
    *,
    ids_with: list[int],
    ids_without: list[int],
    logits_with: list[torch.Tensor],
    logits_without: list[torch.Tensor],
) -> FirstDifference | None:
    """Where the two greedy paths first pick different tokens, and how close that call was."""
    for step, (a, b) in enumerate(zip(ids_with, ids_without)):
        if a == b:
            continue
        with_cache = logits_with[step][0]
        without_cache = logits_without[step][0]
        return FirstDifference(
            step=step,
            token_with_cache=a,
            token_without_cache=b,
            margin_with_cache=top2_margin(with_cache),
            margin_without_cache=top2_margin(without_cache),
            max_abs_logit_diff=float((with_cache - without_cache).abs().max()),
            max_abs_logit=float(with_cache.abs().max()),
        )
    return None
