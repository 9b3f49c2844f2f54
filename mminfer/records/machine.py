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
