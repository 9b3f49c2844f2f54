"""Interleaved A/B timing: two sides of one job, alternated, every run kept, and one record.

Like an A/B benchmark harness, so that a busy machine shows up as noise, not as a result:
warm-ups of both sides, then rounds of (a, b) so that a burst of load lands on both; every run
kept; medians, their order-statistic intervals and the interval of the per-round ratio b / a
(mminfer.records.interval); more rounds, one at a time, while that ratio's interval does not
decide (a faster, slower or the same), up to ``max_runs`` runs per side, each look held to the
per-look level that keeps all looks' error within 10 %. The contention during the timed rounds
(the process's CPU share, the kernel's CPU pressure) is measured beside them. Each run is clocked
by the device's clock (mminfer.timing.clock). The record names its sides ``a`` and ``b`` and its
doubts as the caller names them: each measurement maps it onto its own record's fields.

:func:`time_sides` is the same for k sides (remedies.json's): each round runs every side once,
in an order that turns from round to round (:func:`order_of`), the pairs compared round by round,
more rounds while any pair is undecided; the caller's own checks may be its warm-ups.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass

import torch

from mminfer.records.interval import (
    Interval,
    look_level,
    median_interval,
    ratio_decision,
    ratio_interval,
)
from mminfer.records.machine import Contention
from mminfer.records.spread import NOISY_CV, coefficient_of_variation, verdict_of
from mminfer.timing.clock import clock_name, device_clock
from mminfer.timing.machine import ContentionMeter, cpu_count, load_average

# The doubts in neutral names; a caller maps each onto its own word (or leaves it out).
A_NOT_FASTER = "a_not_faster"  # the median of a is not below b's
A_SPREAD = "a_spread"  # a's runs spread more than NOISY_CV
B_SPREAD = "b_spread"


@dataclass(frozen=True)
class Rounds:
    """How many rounds an A/B timing runs: config section time's warmup, runs and max_runs."""

    warmup: int  # untimed rounds first
    runs: int  # timed rounds at least
    max_runs: int  # timed rounds at most, added one at a time while the timing is doubtful


@dataclass(frozen=True)
class Sides:
    """How a measurement words the A/B timing's doubts, and which of its words contradict physics.

    ``doubts`` maps the neutral doubts (A_NOT_FASTER, A_SPREAD, B_SPREAD) onto the measurement's
    words, in the order its record lists them; a doubt it leaves out is not recorded, though it
    still asks for more rounds. ``contradictions``: its words that make the verdict "untrusted".
    """

    doubts: dict[str, str]
    contradictions: tuple[str, ...]


@dataclass(frozen=True)
class ABTiming:
    """The runs of two sides, a and b, interleaved; their medians, spreads and the conditions."""

    a_s: float  # the median of a's runs
    b_s: float
    cv_a: float  # coefficient of variation of a's runs
    cv_b: float
    warmup: int  # untimed rounds first
    runs: int  # rounds asked for
    max_runs: int  # the most runs per side, extra rounds included
    runs_done: int
    extra_rounds: int
    doubts: list[str]  # in the caller's words, in the order of its names
    verdict: str  # "ok", "noisy" or "untrusted" (mminfer.records.spread.verdict_of)
    noisy_cv: float
    a_runs_s: list[float]
    b_runs_s: list[float]
    a_warmup_s: list[float]
    b_warmup_s: list[float]
    threads: int  # torch's threads while timing
    cpu_count: int | None
    load_before: list[float] | None  # 1-, 5- and 15-minute load averages
    load_after: list[float] | None
    clock: str  # mminfer.timing.clock.clock_name
    a_interval: Interval  # a's median and its interval, at the per-look level
    b_interval: Interval
    ratio_interval: Interval  # the per-round b / a (a speedup where a is the faster side)
    decision: str  # the ratio's: "above" (a faster), "below", "same" or "undecided"
    contention: Contention | None  # during the timed rounds; None for runs given, not timed

    def shared(self) -> dict:
        """The fields that every A/B timing record (time.json, batch.json's and repetition.json's
        timing) holds under these same names: the rounds, the doubts and the verdict, the spread
        threshold and the conditions. Each record names its medians, spreads and runs itself."""
        return {
            "warmup": self.warmup,
            "runs": self.runs,
            "max_runs": self.max_runs,
            "runs_done": self.runs_done,
            "extra_rounds": self.extra_rounds,
            "doubts": self.doubts,
            "verdict": self.verdict,
            "noisy_cv": self.noisy_cv,
            "threads": self.threads,
            "cpu_count": self.cpu_count,
            "load_before": self.load_before,
            "load_after": self.load_after,
            "clock": self.clock,
            "contention": self.contention,
        }


def neutral_doubts(a_runs_s: list[float], b_runs_s: list[float]) -> list[str]:
    """Why these runs cannot be taken at face value, in neutral names (empty when they can)."""
    doubts = []
    if statistics.median(a_runs_s) >= statistics.median(b_runs_s):
        doubts.append(A_NOT_FASTER)
    if coefficient_of_variation(a_runs_s) > NOISY_CV:
        doubts.append(A_SPREAD)
    if coefficient_of_variation(b_runs_s) > NOISY_CV:
        doubts.append(B_SPREAD)
    return doubts


def alternate(
    measure: Callable[[bool], object],
    rounds: int,
    after_round: Callable[[], object] | None = None,
) -> dict[bool, list]:
    """``rounds`` rounds of (a, b): {True: [each round's measure(True)], False: [... of b]};
    ``after_round()`` after each round's b, outside both measures."""
    results = {True: [], False: []}
    for _ in range(rounds):
        for side in (True, False):
            results[side].append(measure(side))
        if after_round is not None:
            after_round()
    return results


def time_ab(
    *,
    work: Callable[[bool], object],
    sides: Sides,
    device,
    rounds: Rounds,
    clock: Callable[[], float] | None = None,
    after_round: Callable[[], object] | None = None,
) -> ABTiming:
    """Time ``work(True)`` (side a) against ``work(False)`` (side b), interleaved.

    The doubts and the verdict are in the words of ``sides``. ``clock`` replaces the device's
    clock (a test's fake clock). ``after_round()`` runs after each timed round (warm-ups out),
    outside the timed runs: a paired measurement's own run (the streamer's cost,
    mminfer.measures.time.measure).
    """
    if clock is None:
        clock = device_clock(device)

    def measure(side: bool) -> float:
        start = clock()
        work(side)
        return clock() - start

    load_before = load_average()
    warmup_s = alternate(measure, rounds.warmup)
    meter = ContentionMeter(device, clock, load_before)
    runs_s = alternate(measure, rounds.runs, after_round)
    level = look_level(rounds.runs, rounds.max_runs)
    while len(runs_s[True]) < rounds.max_runs and undecided(runs_s, level):
        for side, seconds in alternate(measure, 1, after_round).items():
            runs_s[side] += seconds
    return ab_record(
        a_runs_s=runs_s[True],
        b_runs_s=runs_s[False],
        a_warmup_s=warmup_s[True],
        b_warmup_s=warmup_s[False],
        sides=sides,
        runs=rounds.runs,
        max_runs=rounds.max_runs,
        meter=meter,
    )


def undecided(runs_s: dict[bool, list[float]], level: float) -> bool:
    """Whether the rounds so far leave the per-round ratio b / a undecided at ``level``."""
    ratio = ratio_interval(runs_s[False], runs_s[True], level)
    return ratio_decision(ratio) == "undecided"


def ab_record(
    *,
    a_runs_s: list[float],
    b_runs_s: list[float],
    a_warmup_s: list[float],
    b_warmup_s: list[float],
    sides: Sides,
    runs: int,
    max_runs: int,
    meter: ContentionMeter | None,
) -> ABTiming:
    """The record of timed runs: medians, their intervals at the per-look level of ``runs`` ..
    ``max_runs`` (mminfer.records.interval.look_level), spreads, the doubts and verdict in the
    words of ``sides``, the rounds (``runs`` asked for, the rest extra), the conditions now:
    the contention since ``meter`` started (none for runs replayed without one)."""
    found = neutral_doubts(a_runs_s, b_runs_s)
    level = look_level(runs, max(runs, max_runs))
    ratio = ratio_interval(b_runs_s, a_runs_s, level)
    doubts = [name for neutral, name in sides.doubts.items() if neutral in found]
    return ABTiming(
        a_s=statistics.median(a_runs_s),
        b_s=statistics.median(b_runs_s),
        cv_a=coefficient_of_variation(a_runs_s),
        cv_b=coefficient_of_variation(b_runs_s),
        warmup=len(a_warmup_s),
        runs=runs,
        max_runs=max(runs, max_runs),
        runs_done=len(a_runs_s),
        extra_rounds=len(a_runs_s) - runs,
        doubts=doubts,
        verdict=verdict_of(doubts, sides.contradictions),
        noisy_cv=NOISY_CV,
        a_runs_s=a_runs_s,
        b_runs_s=b_runs_s,
        a_warmup_s=a_warmup_s,
        b_warmup_s=b_warmup_s,
        threads=torch.get_num_threads(),
        cpu_count=cpu_count(),
        load_before=None if meter is None else meter.load_before,
        load_after=load_average(),
        clock=clock_name(),
        a_interval=median_interval(a_runs_s, level),
        b_interval=median_interval(b_runs_s, level),
        ratio_interval=ratio,
        decision=ratio_decision(ratio),
        contention=None if meter is None else meter.read(),
    )


@dataclass(frozen=True)
class SidesTiming:
    """The runs of k sides interleaved: each round runs every side once (after the rounds asked
    for, only the sides of a pair still undecided), each round in the order it ran."""

    rounds_s: list[dict[str, float]]  # each timed round: each side's seconds, in the round's order
    runs: int  # rounds asked for
    max_runs: int  # the most rounds, extra rounds included
    contention: Contention  # during the timed rounds

    @property
    def orders(self) -> list[tuple[str, ...]]:
        """Each timed round's order of its sides."""
        return [tuple(seconds) for seconds in self.rounds_s]

    def runs_of(self, side: str) -> list[float]:
        """``side``'s timed runs, in round order."""
        return [seconds[side] for seconds in self.rounds_s if side in seconds]

    def paired(self, a: str, b: str) -> tuple[list[float], list[float]]:
        """The runs of ``a`` and of ``b`` in the rounds that ran both, paired by round."""
        return paired(self.rounds_s, a, b)


def paired(rounds_s: list[dict[str, float]], a: str, b: str) -> tuple[list[float], list[float]]:
    both = [seconds for seconds in rounds_s if a in seconds and b in seconds]
    return [seconds[a] for seconds in both], [seconds[b] for seconds in both]


def order_of(sides: list[str], round_number: int) -> tuple[str, ...]:
    """A round's order: the sides rotated by one every second round and reversed every odd
    round (A B C, C B A, B C A, A C B, ...), so that each side of a pair runs first in some
    rounds and second in others, and a drift hits every side alike over the rounds."""
    shift = (round_number // 2) % len(sides)
    turned = sides[shift:] + sides[:shift]
    return tuple(reversed(turned) if round_number % 2 else turned)


def time_sides(
    *,
    work: dict[str, Callable[[], object]],
    pairs: list[tuple[str, str]],
    device,
    rounds: Rounds,
    warmup: int,
    clock: Callable[[], float] | None = None,
) -> SidesTiming:
    """Time every side of ``work`` (name -> one run), interleaved (:func:`order_of`): ``warmup``
    untimed rounds (0 where the caller's own checks ran each side's same work once), then
    ``rounds.runs`` timed rounds, then one more round at a time of the sides of each pair (a, b)
    in ``pairs`` whose per-round ratio b / a is undecided at the per-look level, up to
    ``rounds.max_runs`` rounds (a decided pair stops, as time_ab does). ``clock`` replaces the
    device's clock (a test's fake clock)."""
    if clock is None:
        clock = device_clock(device)
    names = list(work)

    def one_round(sides: list[str], number: int) -> dict[str, float]:
        seconds = {}
        for name in order_of(sides, number):
            start = clock()
            work[name]()
            seconds[name] = clock() - start
        return seconds

    for number in range(warmup):
        one_round(names, number)
    meter = ContentionMeter(device, clock, load_average())
    rounds_s: list[dict[str, float]] = []
    level = look_level(rounds.runs, rounds.max_runs)
    while len(rounds_s) < max(rounds.runs, rounds.max_runs):
        sides = names
        if len(rounds_s) >= rounds.runs:
            open_pairs = [
                (a, b)
                for a, b in pairs
                if undecided(dict(zip((True, False), paired(rounds_s, a, b))), level)
            ]
            sides = [name for name in names if any(name in pair for pair in open_pairs)]
            if not sides:
                break
        rounds_s.append(one_round(sides, len(rounds_s)))
    return SidesTiming(
        rounds_s=rounds_s,
        runs=rounds.runs,
        max_runs=max(rounds.runs, rounds.max_runs),
        contention=meter.read(),
    )
