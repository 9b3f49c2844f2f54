"""The clock every timing reads: one seam, so that a test can make any timing noisy.

``device_clock(device)`` is time.perf_counter() after the device has finished its queued work (on
CUDA it synchronises first). With the environment variable ``MMINFER_CLOCK_JITTER`` set to an
integer seed, the clock runs fast between two reads (no sleeping, the same offsets for the same
seed): each interval between two timing reads is stretched by a factor from 1 to JITTER_MOST,
whatever the machine's speed, so that the verdicts built on it come out noisy or untrusted. The
factors are not drawn at random (two random draws can land close, and a timing of two runs then
looks quiet): the k-th interval's factor is JITTER_MOST ** u_k, u_k = frac(u_0 + k x GOLDEN) with
u_0 from the seed, so the runs of a timing that reads the clock k times a round (time_ab: 4) are
k steps apart on that sequence and far apart in their factors (at k = 4, at least 1.9 x).
``stamp_clock(device)`` reads the same clock inside a timed interval (a streamer's stamps): its
reads keep the interval's factor, so that a run stamped 65 times is as noisy as a run read twice.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable

import torch

from mminfer.errors import MminferError

JITTER_VARIABLE = "MMINFER_CLOCK_JITTER"
# Every interval between two timing reads comes out 1 to JITTER_MOST times as long, on a fast
# machine or a slow one alike, so that every spread is far past NOISY_CV and every verdict noisy or
# untrusted.
JITTER_MOST = 4.0
# The step between two intervals' exponents: the golden ratio's fraction, the step whose multiples
# stay farthest from whole numbers (at 4 steps, 0.472 of the way round; at 6, 0.292).
GOLDEN = (5**0.5 - 1) / 2
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
    return (
        f"{PLAIN} + seeded jitter ({JITTER_VARIABLE}={seed}, each interval 1 to "
        f"{JITTER_MOST:g} x as long)"
    )


def device_clock(device, *, within: bool = False) -> Callable[[], float]:
    """The clock for ``device``: seconds, read after the device has finished its queued work.

    Whether to synchronise is decided here, once, not at every read inside the timed region.
    ``within``: a clock read inside an interval the timing reads (:func:`stamp_clock`).
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
        return jitter.read(read(), redraw=not within)

    return jittered


def stamp_clock(device) -> Callable[[], float]:
    """The device's clock for stamps inside a timed run (a streamer's puts): the same seconds as
    :func:`device_clock`'s; under the jitter, its reads keep the interval's factor."""
    return device_clock(device, within=True)


class Jitter:
    """One process's stream of offsets: every clock made in the process reads from it in turn, so
    that two clocks (a pass's, the next pass's) go on along one sequence of factors."""

    def __init__(self, seed: int):
        self.exponent = random.Random(seed).random()  # u_0
        self.offset = 0.0
        self.last: float | None = None

    def factor(self) -> float:
        """How many times as long the interval now being read comes out: JITTER_MOST ** u_k."""
        return JITTER_MOST**self.exponent

    def read(self, now: float, redraw: bool = True) -> float:
        """``now`` (the real clock) plus every offset so far: the real time since the last read
        times the interval's factor less one; a timing's read (``redraw``) then steps the
        exponent on to the next interval's, a stamp's keeps it."""
        if self.last is not None:
            self.offset += (self.factor() - 1.0) * max(now - self.last, 0.0)
        self.last = now
        if redraw:
            self.exponent = (self.exponent + GOLDEN) % 1.0
        return now + self.offset


_JITTERS: dict[int, Jitter] = {}


def process_jitter(seed: int) -> Jitter:
    """The process's :class:`Jitter` for ``seed``, made on first use."""
    if seed not in _JITTERS:
        _JITTERS[seed] = Jitter(seed)
    return _JITTERS[seed]


class StampingStreamer:
    """A streamer for MiniMind's ``generate`` that stamps every ``put`` with a run's clock.

    generate calls ``put(prompt ids)`` once, ``put(next_token)`` after every step and ``end()``,
    each behind ``if streamer:``; so the object is truthy, and holds no items. ``stamps[0]`` is the
    prompt's put, ``stamps[1:]`` one per new token, ``ended`` the end's: all read by ``clock`` (the
    device's clock of the run, :func:`device_clock`), the same reads as the run's own start and
    end. The tensors are not kept: a stamp costs one clock read and one append.
    """

    def __init__(self, clock: Callable[[], float]):
        self.clock = clock
        self.stamps: list[float] = []
        self.ended: float | None = None

    def __bool__(self) -> bool:
        return True

    def put(self, value) -> None:
        self.stamps.append(self.clock())

    def end(self) -> None:
        self.ended = self.clock()


class LastRead:
    """A clock that remembers its last read: the run's start, when a streamer is made inside the
    timed work right after the timing read its start."""

    def __init__(self, clock: Callable[[], float]):
        self.clock = clock
        self.last: float | None = None

    def __call__(self) -> float:
        self.last = self.clock()
        return self.last
