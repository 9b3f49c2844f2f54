"""The one clock every timing reads (mminfer.timing.clock), and its seeded jitter for tests
(MMINFER_CLOCK_JITTER): a jittered timing is never "ok" and says its clock."""

from __future__ import annotations

import itertools

import pytest
from shapes import prompt_of

from mminfer.errors import MminferError
from mminfer.measures.time.measure import time_cache
from mminfer.records.spread import NOISY_CV
from mminfer.timing import clock as clock_module
from mminfer.timing.ab import A_NOT_FASTER, A_SPREAD, B_SPREAD, Rounds, Sides, time_ab
from mminfer.timing.clock import JITTER_VARIABLE, clock_name, device_clock, stamp_clock


def ticking(monkeypatch) -> None:
    """perf_counter as a clock that moves one second a read."""
    ticks = itertools.count()
    monkeypatch.setattr(clock_module.time, "perf_counter", lambda: float(next(ticks)))


def fresh(monkeypatch, seed: str) -> None:
    """A fresh process's ticking clock under jitter seed ``seed``."""
    monkeypatch.setenv(JITTER_VARIABLE, seed)
    ticking(monkeypatch)
    monkeypatch.setattr(clock_module, "_JITTERS", {})


def reads(count: int) -> list[float]:
    clock = device_clock("cpu")
    return [clock() for _ in range(count)]


def test_without_the_variable_the_clock_is_perf_counter(monkeypatch):
    monkeypatch.delenv(JITTER_VARIABLE, raising=False)
    assert clock_name() == "perf_counter"
    assert device_clock("cpu") is clock_module.time.perf_counter


def test_the_same_seed_gives_the_same_offsets_and_time_only_grows(monkeypatch):
    fresh(monkeypatch, "7")
    first = reads(20)
    fresh(monkeypatch, "7")  # another process, the same seed
    assert first == reads(20)
    assert all(later > earlier for earlier, later in itertools.pairwise(first))
    fresh(monkeypatch, "8")
    assert reads(20) != first


def test_two_clocks_of_one_process_never_repeat_each_others_offsets(monkeypatch):
    fresh(monkeypatch, "7")
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
    fresh(monkeypatch, "7")
    timing, stamps = device_clock("cpu"), stamp_clock("cpu")
    runs = []
    for _ in range(12):
        start = timing()
        inside = [stamps() for _ in range(64)]
        end = timing()
        steps = [later - earlier for earlier, later in itertools.pairwise([start, *inside, end])]
        assert max(steps) == pytest.approx(min(steps))  # one share through the run
        runs.append(end - start)
    fresh(monkeypatch, "7")
    timing = device_clock("cpu")
    plain = []
    for _ in range(12):
        start = timing()
        for _ in range(64):
            clock_module.time.perf_counter()  # the same real time, no stamp read
        plain.append(timing() - start)
    assert runs == pytest.approx(plain)
    assert max(runs) / min(runs) > 1.5  # the run's seconds spread as a busy machine's


@pytest.mark.parametrize("reads_after_round", [0, 2])
def test_two_rounds_of_an_ab_timing_spread_both_sides_on_every_seed(monkeypatch, reads_after_round):
    """The micro runs time two rounds a side: random factors could land close for one side (1 seed
    in about 30 did) and leave it looking quiet. On the golden-ratio sequence, every seed spreads
    both sides more than twice NOISY_CV, with the time job's paired run after a round (two more
    reads) or without."""
    sides = Sides(
        doubts={A_NOT_FASTER: "a", A_SPREAD: "a_spread", B_SPREAD: "b_spread"}, contradictions=()
    )
    for seed in range(200):
        fresh(monkeypatch, str(seed))
        clock = device_clock("cpu")

        def after_round(clock=clock):
            for _ in range(reads_after_round):
                clock()

        timed = time_ab(
            work=lambda side: None,
            sides=sides,
            device="cpu",
            rounds=Rounds(warmup=1, runs=2, max_runs=2),
            after_round=after_round,
        )
        assert min(timed.cv_a, timed.cv_b) > 2 * NOISY_CV, seed


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
        rounds=Rounds(warmup=0, runs=3, max_runs=3),
        device="cpu",
        run=tiny_run,
    )
    assert timed.verdict in ("noisy", "untrusted")
    assert JITTER_VARIABLE in timed.clock
