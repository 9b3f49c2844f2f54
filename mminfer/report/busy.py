"""The busy machine, said first in both reports: which timing records ran busy, and the load as a
cause.

The report's floor below its sections: the busy line (``time.busy``) names the records a report
reads that ran busy and the command that re-times them; two sections (sweep, serve) name a load as
the cause of two timings' difference only where one side alone ran busy (:func:`busy_alone`).
"""

from __future__ import annotations

from mminfer.measurements import alone_rules
from mminfer.measures.time.time import Timing
from mminfer.records.machine import Contention
from mminfer.records.sentences import Sentence, recomputed

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


def busy_of(time: Timing, **records) -> list[dict]:
    """What the busy line names: each timing record whose contention says the machine was busy
    (``Contention.busy``), its file, the rule that re-times it and its contention, time.json
    first (the reports' opening, time.busy). The records are :func:`timed_contentions`'s."""
    return [
        {"file": f"{name}.json", "rule": name, "contention": contention}
        for name, contention in timed_contentions(time, **records).items()
        if contention.busy
    ]


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


# The busy line opens a report where a timed record it reads ran busy: those files, each beside
# its own figure (busy_groups), then the command that re-times them for this report only
# (``retime``, from the renderer).
BUSY_FILES = (
    "{% for g in busy_groups(busy) %}{{ g.files|join(', ') }}({% if g.kind == 'share' %}CPU 몫"
    " {{ g.share }}%{% else %}CPU 대기 {{ g.pressure }}%{% endif %}){{ '; ' if not loop.last }}"
    "{% endfor %}"
)


BUSY_SENTENCES = (
    Sentence(
        "time.busy",
        holds=busy_of,
        words=(
            "**바쁜 기계**: "
            + BUSY_FILES
            + "을 잴 때 기계가 바빴다. 그 시간은 믿지 말고 조용한 기계에서"
            " 다시 잴 것: `{{ retime }}`."
        ),
        check=recomputed,
    ),
)


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
