"""The busy machine, said first in both reports: which timing records ran busy, and the load as a
cause.

The report's floor below its sections: the busy line (decide.busy.busy_of, its words in
pages/macros.md.j2) names the records a report reads that ran busy and the command that re-times
them, its files grouped by their figure here; two sections (sweep, serve) name a load as the cause
of two timings' difference only where one side alone ran busy (mminfer.records.machine.busy_alone).
"""

from __future__ import annotations

from collections.abc import Mapping

from mminfer.measurements import alone_rules
from mminfer.measures.time.time import Timing
from mminfer.records.machine import Contention


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


# The timing records: each timing rule's (the registry's ``alone``) record of its own name, in the
# reports' order, time.json first (the reports' opening); each holds the contention of its timed
# runs (repetition's and batch's in their ``timing``). latency.json, from time.json's runs, is
# time's.
TIMED = tuple(alone_rules())


def timed_contentions(time: Timing, **records) -> dict[str, Contention]:
    """The contention each timing record (TIMED) measured during its timed runs, by measurement
    name; a record not given, or not timed, left out. ``records``: the report's others, by name."""
    timed = {name: records.get(name) for name in TIMED} | {"time": time}
    for name in ("repetition", "batch"):
        timed[name] = getattr(timed[name], "timing", None)
    found = {name: getattr(record, "contention", None) for name, record in timed.items()}
    return {name: contention for name, contention in found.items() if contention is not None}


def busy_of(records: Mapping[str, object]) -> list[dict] | None:
    """busy.busy_of, the busy line: each timing record of ``records`` (the report's, by name)
    whose contention says the machine was busy (``Contention.busy``), its file, the rule that
    re-times it and its contention, time.json first (the reports' opening); None where none
    was (:func:`timed_contentions`)."""
    others = {name: record for name, record in records.items() if name != "time"}
    busy = [
        {"file": f"{name}.json", "rule": name, "contention": contention}
        for name, contention in timed_contentions(records.get("time"), **others).items()
        if contention.busy
    ]
    return busy or None
