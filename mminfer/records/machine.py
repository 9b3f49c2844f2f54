"""What a record says of the machine it ran on: a probe's speed, a memory cache's size.

Shared by the measurements whose records hold them (anatomy's probes, serve's caches) and written
by mminfer.timing.machine, which measures them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Speed:
    """One probe of the machine: the median over timed runs, their spread and the runs."""

    per_s: float  # ops, FLOPs or bytes a second (the median run's)
    cv: float  # coefficient of variation of the runs' seconds
    runs_s: list[float]
    work: int  # ops, FLOPs or bytes of one run


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


def is_busy(cpu_share: float | None, cpu_pressure: float | None) -> bool:
    """Whether a timed stretch ran on a busy machine (BUSY_SHARE, BUSY_PRESSURE)."""
    starved = cpu_share is not None and cpu_share < BUSY_SHARE
    pressed = cpu_pressure is not None and cpu_pressure > BUSY_PRESSURE
    return starved or pressed
