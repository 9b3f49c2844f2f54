"""The clock every timing reads: one seam, so that a test can make any timing noisy.

``device_clock(device)`` is time.perf_counter() after the device has finished its queued work (on
CUDA it synchronises first). With the environment variable ``MMINFER_CLOCK_JITTER`` set to an
integer seed, every read also adds a seeded random positive offset to all later reads (no
sleeping, the same offsets for the same seed): each interval grows by up to JITTER_S at random,
far beyond a tiny model's runs, so that the verdicts built on it come out noisy or untrusted.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable

import torch

from mminfer.errors import MminferError

JITTER_VARIABLE = "MMINFER_CLOCK_JITTER"
# The largest offset one read adds (seconds): past every run of the end-to-end tests' settings
# (the micro demo's batch runs ~0.3 s), so that every verdict is noisy or untrusted on any machine.
JITTER_S = 0.5
PLAIN = "perf_counter"


def jitter_seed() -> int | None:
    """The seed of ``MMINFER_CLOCK_JITTER``, or None where it is unset or empty."""
    text = os.environ.get(JITTER_VARIABLE, "").strip()
    if not text:
        return None
    try:
        return int(text)
    except ValueError:
        raise MminferError(
            f"the environment variable {JITTER_VARIABLE} (the tests' clock jitter) must be an "
            f"integer seed; got {text!r}. Unset it to time with the plain clock."
        ) from None


def clock_name() -> str:
    """What the timing records' ``clock`` says: "perf_counter", or the jitter and its seed."""
    seed = jitter_seed()
    if seed is None:
        return PLAIN
    return f"{PLAIN} + seeded jitter ({JITTER_VARIABLE}={seed}, up to {JITTER_S} s a read)"


def device_clock(device) -> Callable[[], float]:
    """The clock for ``device``: seconds, read after the device has finished its queued work.

    Whether to synchronise is decided here, once, not at every read inside the timed region.
    """
    if torch.device(device).type == "cuda":

        def synced() -> float:
            torch.cuda.synchronize(device)
            return time.perf_counter()

        read = synced
    else:
        read = time.perf_counter
    seed = jitter_seed()
    if seed is None:
        return read
    jitter = process_jitter(seed)

    def jittered() -> float:
        return read() + jitter.next_offset()

    return jittered


class Jitter:
    """One process's stream of offsets: every clock made in the process draws from it in turn, so
    that two clocks (a pass's, the next pass's) never repeat each other's offsets."""

    def __init__(self, seed: int):
        self.draw = random.Random(seed)
        self.offset = 0.0

    def next_offset(self) -> float:
        self.offset += self.draw.uniform(0.0, JITTER_S)
        return self.offset


_JITTERS: dict[int, Jitter] = {}


def process_jitter(seed: int) -> Jitter:
    """The process's :class:`Jitter` for ``seed``, made on first use."""
    if seed not in _JITTERS:
        _JITTERS[seed] = Jitter(seed)
    return _JITTERS[seed]
