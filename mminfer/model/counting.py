"""Counting the tokens fed into ``forward``, and the two formulas they must match.

``generate`` calls ``self.forward``, so a recorder that replaces ``forward`` on the instance sees
every call of the loop.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import contextmanager

import torch

from mminfer.model.twin import wrapped_forward


def fed_with_cache_formula(prompt_len: int, new_tokens: int) -> int:
    """The first step feeds the whole prompt, each later step one token: P + (N - 1)."""
    return prompt_len + (new_tokens - 1)


def fed_without_cache_formula(prompt_len: int, new_tokens: int) -> int:
    """Step i (0-based) feeds everything so far, P + i tokens: N * P + N * (N - 1) / 2."""
    return new_tokens * prompt_len + new_tokens * (new_tokens - 1) // 2


class ForwardRecorder:
    """Records every call of ``model.forward``.

    For each call: the number of tokens fed (input_ids' length), optionally the last position's
    logits in float32 (to compare two decoding paths) and, given a ``clock``, the clock's reading
    as the call starts (to time every step).
    """

    def __init__(self, keep_logits: bool = False, clock: Callable[[], float] | None = None):
        self.keep_logits = keep_logits
        self.clock = clock
        self.fed_per_call: list[int] = []
        self.last_logits: list[torch.Tensor] = []  # one (batch, vocab) tensor per call
        self.started: list[float] = []  # clock readings, one per call (with a clock)

    def step_seconds(self, end: float) -> list[float]:
        """Each call's seconds: from its start to the next call's start, the last one to ``end``
        (so a step includes generate's own work between the calls)."""
        ends = self.started[1:] + [end]
        return [finish - start for start, finish in zip(self.started, ends)]

    @contextmanager
    def watching(self, model):
        """Record the calls of ``model.forward`` inside the ``with`` block, then restore it."""

        def recording(original):
            def recording_forward(input_ids, *args, **kwargs):
                if self.clock is not None:
                    self.started.append(self.clock())
                self.fed_per_call.append(int(input_ids.shape[1]))
                outputs = original(input_ids, *args, **kwargs)
                if self.keep_logits:
                    self.last_logits.append(outputs.logits[:, -1, :].float().cpu().clone())
                return outputs

            return recording_forward

        with wrapped_forward(model, recording):
            yield self
