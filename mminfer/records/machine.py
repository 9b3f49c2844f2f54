"""What a record says of the machine it ran on: a probe's speed, a memory cache's size.

Shared by the measurements whose records hold them (anatomy's probes, serve's caches) and written
by mminfer.timing.machine, which measures them.
"""

from __future__ import annotations

import itertools
import statistics
from dataclasses import dataclass

from mminfer.records import rates
from mminfer.records.interval import FAMILY_LEVEL, Interval, median_interval

# A probe whose sorted runs part at their widest gap (as a ratio) into two groups whose medians
# differ by more than this factor ran in two states (a busy and an idle core, a cache and memory):
# its median is one of them by chance, so it is named unreliable and nothing is concluded from it.
PROBE_WIDE = 2.0


@dataclass
class Speed:
    """One probe of the machine: the median over timed runs, their spread and the runs."""

    per_s: float  # ops, FLOPs or bytes a second (the median run's)
    cv: float  # coefficient of variation of the runs' seconds
    runs_s: list[float]
    work: int  # ops, FLOPs or bytes of one run
    per_s_interval: Interval  # the median of the runs' rates (work / seconds) and its interval
    reliable: bool  # the runs do not fall into two groups (:func:`two_groups`, PROBE_WIDE)


def two_groups(runs_s: list[float]) -> bool:
    """Whether a probe's runs fall into two groups: split at the widest gap between neighbours
    of the sorted runs (as a ratio), the upper group's median more than PROBE_WIDE times the
    lower's."""
    ordered = sorted(runs_s)
    if len(ordered) < 2 or ordered[0] <= 0:
        return len(ordered) >= 2
    gaps = [upper / lower for lower, upper in itertools.pairwise(ordered)]
    cut = gaps.index(max(gaps)) + 1
    return statistics.median(ordered[cut:]) > PROBE_WIDE * statistics.median(ordered[:cut])


def speed_of(runs_s: list[float], work: int, cv: float) -> Speed:
    """A probe's record from its timed runs: the rate of the median run, the interval of the
    runs' rates (one look: FAMILY_LEVEL), and whether the runs fall into two groups."""
    per_run = [rates.per_s(work, seconds) for seconds in runs_s]
    return Speed(
        per_s=rates.per_s(work, statistics.median(runs_s)),
        cv=cv,
        runs_s=list(runs_s),
        work=work,
        per_s_interval=median_interval(per_run, FAMILY_LEVEL),
        reliable=not two_groups(runs_s),
    )


@dataclass
class CacheLevel:
    """One of the device's memory caches (a CPU's L1d, L2, L3; a GPU's L2), as the threads of a
    decode step hold it together (mminfer.timing.machine.cpu_caches)."""

    name: str  # "L2"; "2 x L2" where the threads hold two copies (two cores' own L2)
    bytes: int  # the size of one copy x the copies held


# A timed stretch whose process got less than this share of the CPU its threads could use, or in
# which some task waited for a CPU more than BUSY_PRESSURE of the time, ran on a busy machine.
BUSY_SHARE = 0.75
BUSY_PRESSURE = 0.20


@dataclass
class Contention:
    """How busy the machine was during the timed runs themselves (not the load average, which
    counts the workflow's own earlier jobs): mminfer.timing.machine.ContentionMeter."""

    cpu_share: float | None  # the process's CPU time / (wall x threads); None on CUDA
    cpu_pressure: float | None  # /proc/pressure/cpu "some": the share of the wall time some task
    # waited for a CPU; None where the kernel has no pressure stall information
    wall_s: float  # the timed stretch, on the process's clock (mminfer.timing.clock)
    threads: int
    busy: bool  # cpu_share under BUSY_SHARE or cpu_pressure over BUSY_PRESSURE

    @classmethod
    def measured(
        cls, *, cpu_share: float | None, cpu_pressure: float | None, wall_s: float, threads: int
    ) -> Contention:
        """A measured stretch's contention, its flag derived from its figures (:func:`is_busy`),
        as the reports' check derives it again."""
        return cls(
            cpu_share=cpu_share,
            cpu_pressure=cpu_pressure,
            wall_s=wall_s,
            threads=threads,
            busy=is_busy(cpu_share, cpu_pressure),
        )


@dataclass
class TimedOn:
    """The machine an A/B timing's rounds ran on, the fields a timing record shares (batch.json's
    and repetition.json's timing): its threads and cores, the load average before the warm-ups and
    after the last round, and the contention during the rounds."""

    threads: int
    cpu_count: int | None
    load_before: list[float] | None
    load_after: list[float] | None
    contention: Contention | None  # during the timed rounds (mminfer.records.machine)


def is_busy(cpu_share: float | None, cpu_pressure: float | None) -> bool:
    """Whether a timed stretch ran on a busy machine (BUSY_SHARE, BUSY_PRESSURE)."""
    starved = cpu_share is not None and cpu_share < BUSY_SHARE
    pressed = cpu_pressure is not None and cpu_pressure > BUSY_PRESSURE
    return starved or pressed


def contention_of(record) -> Contention | None:
    """A timing record's contention, None for a record not given or not timed."""
    return getattr(record, "contention", None)


def busy_alone(one, other, names: tuple[str, str]) -> str | None:
    """Which of two timing records alone ran busy (its recorded flag), by ``names``: a load is
    named as a cause of their difference only where one side had it and the other did not;
    None where both or neither did."""
    one_busy, other_busy = (
        getattr(contention_of(record), "busy", False) for record in (one, other)
    )
    if one_busy == other_busy:
        return None
    return names[0] if one_busy else names[1]
