"""The busy machine, said first in both reports: which timing records ran busy, and the load as a
cause.

The report's floor below its sections: the busy line (decide.time.busy_of, its words in
pages/macros.md.j2) names the records a report reads that ran busy and the command that re-times
them, its files grouped by their figure here; two sections (sweep, serve) name a load as the cause
of two timings' difference only where one side alone ran busy (busy_alone).
"""

from __future__ import annotations

from mminfer.measures.time.decide import busy_of, timed_contentions  # noqa: F401
from mminfer.records.machine import busy_alone, contention_of  # noqa: F401


def busy_groups(busy: list[dict]) -> list[dict]:
    """The busy line's files grouped by their own printed figure, in the order they are named:
    each group's ``files`` and its ``share`` (the CPU share the files' processes got, whole
    percent) or, where none was read (CUDA), its ``pressure`` (the kernel's CPU pressure). Every
    file stands beside its own figure; files whose figures print alike share one."""
    groups: dict[tuple, dict] = {}
    for item in busy:
        contention = item["contention"]
        if contention.cpu_share is not None:
            key = ("share", round(contention.cpu_share * 100))
        else:
            key = ("pressure", round(contention.cpu_pressure * 100))
        group = groups.setdefault(key, {"files": [], key[0]: key[1], "kind": key[0]})
        group["files"].append(item["file"])
    return list(groups.values())
