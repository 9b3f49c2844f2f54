"""Prompt-lookup decoding: greedy generation that checks several guessed tokens per forward call.

The cache cuts the tokens a step feeds, not the steps: N new tokens still take N calls of forward.
Prompt lookup cuts the calls. Its guesses come from the text itself: the most recent earlier place
where the last ``ngram`` tokens occurred (in the prompt or in what was generated) proposes the
tokens that followed there, up to ``guesses`` of them. One forward over the last token and the
guesses, the cache holding everything before, gives the model's own next token after each of
them; the guesses it agrees with are kept, then its own token after the last kept one, and the
cache is cut back to the positions kept (copied, so that only those bytes stay held).

With greedy decoding the ids are the cached generate's, but where a call was a near-tie: a verify
call computes the same positions grouped differently (several query rows at once), so a logit may
round differently. Sampled decoding needs speculative sampling's acceptance rule and is not here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from mminfer.model.cachebytes import cache_tensor_bytes


@dataclass
class LookupRun:
    """One greedy generation by prompt lookup: its ids and what it fed, called and kept."""

    ids: list[int]  # the new tokens, N of them
    calls: int  # forward calls, the prefill included
    fed: int  # tokens fed into forward, the prompt included
    proposed: int  # guesses checked
    accepted: int  # guesses the model agreed with
    accepted_per_call: list[int] = field(default_factory=list)  # per verify call, in order
    cache_positions: int = 0  # positions the cache holds after the last cut
    cache_bytes: int = 0  # the bytes its K and V tensors hold then


def propose(ids: list[int], ngram: int, limit: int) -> list[int]:
    """Up to ``limit`` tokens that followed the most recent earlier occurrence of ``ids``'s last
    ``ngram`` tokens; none where they occur nowhere before.

    Where that occurrence is so recent that what followed it runs into the end of ``ids``, the
    copy goes on over the tokens it has just copied (as LZ77 copies an overlapping match): a text
    that loops with period p proposes ``limit`` tokens of its loop, not p."""
    if limit <= 0 or len(ids) <= ngram:
        return []
    tail = ids[-ngram:]
    for start in range(len(ids) - ngram - 1, -1, -1):
        if ids[start : start + ngram] == tail:
            text = list(ids)
            source = start + ngram
            while len(text) - len(ids) < limit:
                text.append(text[source])
                source += 1
            return text[len(ids) :]
    return []


def cut_cache(presents, positions: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Each layer's K and V, (batch, positions, KV heads, head_dim) as MiniMind lays them out
    before repeat_kv, cut back to the first ``positions`` and copied: the rest is freed."""
    return [(k[:, :positions].clone(), v[:, :positions].clone()) for k, v in presents]


@torch.inference_mode()
def lookup_generate(
    model,
    prompt_ids: list[int],
    new_tokens: int,
    *,
    guesses: int,
    ngram: int,
    device,
    proposer: Callable[[list[int], int, int], list[int]] = propose,
) -> LookupRun:
    """``new_tokens`` greedy tokens after ``prompt_ids`` by prompt lookup over the model's own
    forward and cache (the twin's or MiniMind's: both take and return a list of (K, V) per
    layer). No call reaches past position P + N - 1, the last the cached generate feeds."""
    prompt = torch.tensor([prompt_ids], dtype=torch.long, device=device)
    out = model(prompt, use_cache=True)
    run = LookupRun(
        ids=[int(out.logits[0, -1].argmax())], calls=1, fed=len(prompt_ids), proposed=0, accepted=0
    )
    cache = out.past_key_values
    while len(run.ids) < new_tokens:
        remaining = new_tokens - len(run.ids)
        guess = proposer(prompt_ids + run.ids, ngram, min(guesses, remaining - 1))
        feed = torch.tensor([[run.ids[-1], *guess]], dtype=torch.long, device=device)
        out = model(feed, past_key_values=cache, use_cache=True)
        picked = out.logits[0].argmax(dim=-1).tolist()  # the model's next token after each fed
        kept = 0
        while kept < len(guess) and guess[kept] == picked[kept]:
            kept += 1
        run.ids += [*guess[:kept], picked[kept]]
        run.calls += 1
        run.fed += feed.shape[1]
        run.proposed += len(guess)
        run.accepted += kept
        run.accepted_per_call.append(kept)
        # every position but the newest token's, which the next call feeds
        cache = cut_cache(out.past_key_values, len(prompt_ids) + len(run.ids) - 1)
    run.cache_positions = cache[0][0].shape[1]
    run.cache_bytes = cache_tensor_bytes(cache)
    return run
