"""The clock every timing reads: one seam, so that a test can make any timing noisy.

``device_clock(device)`` is time.perf_counter() after the device has finished its queued work (on
CUDA it synchronises first). With the environment variable ``MMINFER_CLOCK_JITTER`` set to an
integer seed, the clock runs fast by a seeded random share between two reads (no sleeping, the
same draws for the same seed): each interval between two timing reads grows by a random share of
itself, up to JITTER_SHARE times, whatever the machine's speed, so that the verdicts built on it
come out noisy or untrusted. ``stamp_clock(device)`` reads the same clock inside a timed interval
(a streamer's stamps): its reads keep the interval's share, so that a run stamped 65 times is as
noisy as a run read twice (a share drawn per stamp would average out over the run).
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable

import torch

from mminfer.errors import MminferError

JITTER_VARIABLE = "MMINFER_CLOCK_JITTER"
# Each read adds up to this many times the real time since the clock's last read, at random: every
# interval comes out 1 to 1 + JITTER_SHARE times as long, on a fast machine or a slow one alike,
# so that every spread is far past NOISY_CV and every verdict noisy or untrusted.
JITTER_SHARE = 2.0
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
        f"{PLAIN} + seeded jitter ({JITTER_VARIABLE}={seed}, each interval up to "
        f"{1 + JITTER_SHARE:g} x as long)"
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
    :func:`device_clock`'s; under the jitter, its reads never draw the interval's share anew."""
    return device_clock(device, within=True)


class Jitter:
    """One process's stream of offsets: every clock made in the process draws from it in turn, so
    that two clocks (a pass's, the next pass's) never repeat each other's draws."""

    def __init__(self, seed: int):
        self.draw = random.Random(seed)
        self.share = self.draw.uniform(0.0, JITTER_SHARE)
        self.offset = 0.0
        self.last: float | None = None

    def read(self, now: float, redraw: bool = True) -> float:
        """``now`` (the real clock) plus every offset so far: the interval's share, up to
        JITTER_SHARE, of the real time since the last read; a timing's read (``redraw``) then
        draws the next interval's share, a stamp's keeps it."""
        if self.last is not None:
            self.offset += self.share * max(now - self.last, 0.0)
        self.last = now
        if redraw:
            self.share = self.draw.uniform(0.0, JITTER_SHARE)
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
