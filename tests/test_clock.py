"""The one clock every timing reads (mminfer.clock), and its seeded jitter for tests.

With MMINFER_CLOCK_JITTER set to a seed, every read adds a seeded random positive offset: the same
seed gives the same offsets, time never runs backwards, and a timing read through it cannot come
out "ok" (its runs spread far past NOISY_CV); the records say which clock they were read by.
"""

from __future__ import annotations

import itertools

import pytest
from shapes import prompt_of

from mminfer import clock as clock_module
from mminfer.clock import JITTER_VARIABLE, clock_name, device_clock, stamp_clock
from mminfer.errors import MminferError
from mminfer.timing import time_cache


def ticking(monkeypatch) -> None:
    """perf_counter as a clock that moves one second a read."""
    ticks = itertools.count()
    monkeypatch.setattr(clock_module.time, "perf_counter", lambda: float(next(ticks)))


def reads(count: int) -> list[float]:
    clock = device_clock("cpu")
    return [clock() for _ in range(count)]


def test_without_the_variable_the_clock_is_perf_counter(monkeypatch):
    monkeypatch.delenv(JITTER_VARIABLE, raising=False)
    assert clock_name() == "perf_counter"
    assert device_clock("cpu") is clock_module.time.perf_counter


def test_the_same_seed_gives_the_same_offsets_and_time_only_grows(monkeypatch):
    monkeypatch.setenv(JITTER_VARIABLE, "7")
    ticking(monkeypatch)
    monkeypatch.setattr(clock_module, "_JITTERS", {})  # a fresh process
    first = reads(20)
    ticking(monkeypatch)
    monkeypatch.setattr(clock_module, "_JITTERS", {})  # another process, the same seed
    assert first == reads(20)
    assert all(later > earlier for earlier, later in itertools.pairwise(first))
    ticking(monkeypatch)
    monkeypatch.setattr(clock_module, "_JITTERS", {})
    monkeypatch.setenv(JITTER_VARIABLE, "8")
    assert reads(20) != first


def test_two_clocks_of_one_process_never_repeat_each_others_offsets(monkeypatch):
    monkeypatch.setenv(JITTER_VARIABLE, "7")
    ticking(monkeypatch)
    monkeypatch.setattr(clock_module, "_JITTERS", {})
    one = reads(10)
    other = reads(10)  # a second pass's clock: it goes on where the first left off
    steps_one = [later - earlier for earlier, later in itertools.pairwise(one)]
    steps_other = [later - earlier for earlier, later in itertools.pairwise(other)]
    assert steps_one != steps_other
    assert other[0] > one[-1]


def test_stamps_inside_a_run_keep_its_share_so_a_stamped_run_is_as_noisy_as_a_plain_one(
    monkeypatch,
):
    """A streamer's stamps read the clock 1 + N times inside a run: a share drawn per stamp would
    average out over the run (65 draws) and leave the run's seconds quiet; the stamps keep the
    share the run's start drew, so the run's seconds are what two reads would give."""
    monkeypatch.setenv(JITTER_VARIABLE, "7")
    ticking(monkeypatch)
    monkeypatch.setattr(clock_module, "_JITTERS", {})
    timing, stamps = device_clock("cpu"), stamp_clock("cpu")
    runs = []
    for _ in range(12):
        start = timing()
        inside = [stamps() for _ in range(64)]
        end = timing()
        steps = [later - earlier for earlier, later in itertools.pairwise([start, *inside, end])]
        assert max(steps) == pytest.approx(min(steps))  # one share through the run
        runs.append(end - start)
    ticking(monkeypatch)
    monkeypatch.setattr(clock_module, "_JITTERS", {})
    timing = device_clock("cpu")
    plain = []
    for _ in range(12):
        start = timing()
        for _ in range(64):
            clock_module.time.perf_counter()  # the same real time, no stamp read
        plain.append(timing() - start)
    assert runs == pytest.approx(plain)
    assert max(runs) / min(runs) > 1.5  # the run's seconds spread as a busy machine's


def test_a_seed_that_is_not_an_integer_is_refused(monkeypatch):
    monkeypatch.setenv(JITTER_VARIABLE, "noisy")
    with pytest.raises(MminferError, match=JITTER_VARIABLE):
        device_clock("cpu")


def test_a_jittered_timing_is_never_ok_and_says_its_clock(monkeypatch, tiny_model, tiny_run):
    monkeypatch.setenv(JITTER_VARIABLE, "0")
    timed = time_cache(
        model=tiny_model,
        prompt_ids=prompt_of(8),
        new_tokens=2,
        warmup=0,
        runs=3,
        max_runs=3,
        device="cpu",
        run=tiny_run,
    )
    assert timed.verdict in ("noisy", "untrusted")
    assert JITTER_VARIABLE in timed.clock
