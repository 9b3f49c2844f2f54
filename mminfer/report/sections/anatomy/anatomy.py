"""## 한 단계의 해부: anatomy.json's facts and glance row, and its joins.

anatomy.json's counts and probes split against time.json's medians (which term binds each path,
each term's share) and the sweep's fitted intercept against time.json's fixed cost per step.
"""

from __future__ import annotations

from mminfer.measures.anatomy.anatomy import Anatomy, path_splits
from mminfer.measures.time.time import Timing
from mminfer.records import Glance, rates
from mminfer.report.sections.anatomy.joins import comparable, fixed_step, measured_intervals


def anatomy_facts(anatomy: Anatomy) -> dict:
    """The counts and the machine; time.json's split of both paths is the report's join
    (this module's join), absent here: ``comparable`` "absent", no ``split``."""
    machine = anatomy.machine
    return vars(anatomy) | {
        # "op 하나 {op_s}, 행렬곱 {matmul_gflop_per_s} GFLOP/s, 복사 대역폭 ... {gb_per_s} GB/s"
        "op_s": rates.seconds_for(1, machine.op.per_s),
        "matmul_gflop_per_s": rates.gflop_per_s(machine.matmul.per_s),
        "bandwidth_gb_per_s": [rates.gb_per_s(probe.speed.per_s) for probe in machine.bandwidth],
        "comparable": "absent",
        "counter_gap": bool(anatomy.uncounted_ops),
        "time_verdict": None,
        "split": None,
    }


def anatomy_time_facts(anatomy: Anatomy, time: Timing | None = None) -> dict:
    """The counts and the machine (mminfer.measures.anatomy.anatomy.anatomy_facts), and where
    time.json is :func:`comparable` the split of both paths against its intervals."""
    joined = comparable(anatomy, time)
    facts = anatomy_facts(anatomy) | {
        "comparable": joined,
        "time_verdict": None if time is None else time.verdict,
        # the fixed cost per step, time.json's one figure (its narrow side)
        "fixed_step": None if time is None else fixed_step(time),
    }
    if joined == "yes":
        facts["split"] = path_splits(anatomy, measured_intervals(time))
    return facts


def anatomy_time_glance(anatomy: Anatomy, time: Timing | None = None) -> Glance:
    """The row: the term that binds the cached path, where time.json is comparable."""
    if comparable(anatomy, time) != "yes":
        return Glance(lesson="counts_only", terms=("dispatch", "roofline", "fixed_cost"))
    return Glance(
        lesson="split", verdict=time.verdict, terms=("dispatch", "roofline", "fixed_cost")
    )
