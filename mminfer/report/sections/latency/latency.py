"""## 사용자가 기다리는 시간: latency.json's facts and glance row, and its joins.

From time.json's own runs; where the uncached step crosses the TPOT limit, from sweep.json.
"""

from __future__ import annotations

from mminfer.measures.sweep.sweep import Sweep
from mminfer.measures.time import decide
from mminfer.measures.time.latency import Latency
from mminfer.measures.time.time import Timing
from mminfer.records import Glance
from mminfer.report.sections.latency.joins import crossing_of


def latency_facts(latency: Latency, time: Timing | None = None) -> dict:
    """latency.json's figures; ``estimate`` where the time job's verdict is noisy, ``trusted``
    unless untrusted. Where sweep.json's steps pass the TPOT limit is the report's join
    (this module's join): ``crossing`` None here. Its words are latency.md.j2's."""
    float32_cpu = latency.run.dtype == "float32" and latency.run.device == "cpu"
    return vars(latency) | {
        "trusted": latency.verdict != "untrusted",
        "estimate": latency.verdict == "noisy",
        "crossing": None,
        "float32_cpu": float32_cpu,
    }


def latency_glance(latency: Latency) -> Glance:
    """``lesson``: time.lesson's variant (:func:`lesson`)."""
    return Glance(
        lesson=decide.lesson(latency), verdict=latency.verdict, terms=("ttft", "tpot", "itl")
    )


def latency_time_sweep_facts(
    latency: Latency, time: Timing | None = None, sweep: Sweep | None = None
) -> dict:
    """latency.json's facts (mminfer.measures.time.latency.latency_facts, time.json its own
    rule's) and where sweep.json's clocked uncached steps pass the TPOT limit
    (:func:`crossing_of`: the figures latency.sweep_crosses prints)."""
    return latency_facts(latency, time) | {"crossing": crossing_of(latency, sweep)}
