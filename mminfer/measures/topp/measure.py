"""Step 6: what top-p leaves.

From the last position's logits after a prefix, how many tokens survive MiniMind's rule
(:func:`mminfer.model.twin.top_p_mask`) at each p; the open and a sharp position in detail.
"""

from __future__ import annotations

import math

import torch

from mminfer.measures.topp.topp import Position, TopP, TopPDetail, TopToken
from mminfer.model.draws import (
    next_token_logits,
    temperature_key,
)
from mminfer.model.finite import check_logits, model_named
from mminfer.model.prompts import prefix_prompt
from mminfer.model.twin import top_p_mask
from mminfer.records import RunInfo


def entropy_bits(logits: torch.Tensor) -> float:
    probs = torch.softmax(logits.double(), dim=-1)
    nonzero = probs[probs > 0]
    return float(-(nonzero * nonzero.log2()).sum())


def survivors_by_p(logits: torch.Tensor, ps: list[float]) -> TopP:
    """topp.json: {"0.5": n, "0.9": n, "0.99": n}, the tokens MiniMind's top-p rule keeps.

    The rule is the model's own top_p_mask, as generate applies it, on one (vocab,) logit vector.
    """
    counts = {}
    for p in ps:
        removed = top_p_mask(logits.unsqueeze(0).clone(), p)
        counts[temperature_key(p)] = int((~removed).sum())
    return counts


def position_detail(tokenizer, prefix: str, logits: torch.Tensor, ps: list[float], top: int = 10):
    """The next-token distribution after one prefix.

    The survivors (:func:`survivors_by_p`), the entropy and the most likely next tokens.
    """
    probs = torch.softmax(logits.double(), dim=-1)
    values, indices = torch.topk(probs, top)
    sorted_probs = torch.sort(probs, descending=True).values
    entropy = entropy_bits(logits)
    top_tokens = []
    for value, index in zip(values, indices):
        token = tokenizer.decode([int(index)], skip_special_tokens=False)
        top_tokens.append(TopToken(id=int(index), token=token, prob=float(value)))
    return Position(
        prefix=prefix,
        survivors=survivors_by_p(logits, ps),
        entropy_bits=entropy,
        top_tokens=top_tokens,
        sorted_probs=[float(x) for x in sorted_probs[: max(200, top)]],
        perplexity=math.pow(2.0, entropy),
    )


def topp_detail(
    *, model, tokenizer, prefixes: dict[str, str], ps: list[float], device, run: RunInfo
) -> TopPDetail:
    """topp_detail.json: each named position ("open", "sharp") after [bos] + its prefix."""
    positions = {}
    for name, prefix in prefixes.items():
        logits = next_token_logits(model, prefix_prompt(tokenizer, prefix), device)
        where = f"{model_named(run.checkpoint, run.dtype)}, the next token after [bos]{prefix}"
        check_logits(logits, where)  # top-p of NaN keeps every token: never a survivor count
        positions[name] = position_detail(tokenizer, prefix, logits, ps)
    return TopPDetail(ps=[float(p) for p in ps], positions=positions, run=run)
