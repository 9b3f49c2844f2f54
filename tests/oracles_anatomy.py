"""The oracles of the reason line anatomy.json gives ## KV 캐시.

Each reads its sentence's literal words on the raw numbers: the steps of each path (summed
here, not the record's totals), the probes' runs (work over the median run), time.json's
medians and speedup, never the facts' split. ``ORACLES[key](records, about)``: tests/oracles.py
merges them. The section's own sentences (anatomy.*) are checked by their ``check`` beside
their words (mminfer.measures.anatomy.anatomy, mminfer.report.joins), from the raw runs.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping

from oracles_timing import fed_ratio

from mminfer.records.interval import against, look_level, ratio_interval


def rate(speed) -> float:
    """A probe's work a second, from its runs."""
    return speed.work / statistics.median(speed.runs_s)


def summed(anatomy, path: str, key: str) -> int:
    return sum(getattr(step, key) for step in getattr(anatomy, path).steps)


def kernels(anatomy, path: str) -> int:
    """Every kernel of the generate call: each call's, and those between (the totals hold the
    count between the calls, which no step holds)."""
    return summed(anatomy, path, "ops") + getattr(anatomy, path).totals.ops_between


def measured(records, path: str) -> float:
    """time.json's median of the path (the record's own, as every timing oracle reads it)."""
    return getattr(records["time"], f"{path}_s")


# --- the reason line of ## KV 캐시 -------------------------------------------------------------


def ratios(records) -> dict[str, float]:
    anatomy = records["anatomy"]

    def ratio(count) -> float:
        return count("without_cache") / count("with_cache")

    return {
        "flops": ratio(lambda path: summed(anatomy, path, "flops_formula")),
        "ops": ratio(lambda path: kernels(anatomy, path)),
        "bytes": ratio(lambda path: summed(anatomy, path, "bytes_formula")),
    }


def same_calls(records) -> bool:
    anatomy = records["anatomy"]
    return len(anatomy.with_cache.steps) == len(anatomy.without_cache.steps)


def speedup_in_runs(time):
    """The speedup's interval from time.json's raw rounds at its looks' level."""
    level = look_level(time.runs, time.max_runs)
    return ratio_interval(time.without_cache_runs_s, time.with_cache_runs_s, level)


def cuts_flops_not_calls(records, about) -> bool:
    """ "캐시는 FLOPs를 R배 줄이지만 forward 호출은 두 경로 모두 N회이고 ..."."""
    return same_calls(records) and ratios(records)["flops"] > 1


def speedup_against(records, about) -> bool:
    """ "speedup은 그 둘(커널, 바이트의 비)과 FLOPs의 비 사이에 있다. 호출마다 드는 일은 넣는
    토큰(R배)만큼 줄지 않는다" (between), "FLOPs의 비보다도 크다" (above_flops), "그 호출마다의
    일의 비보다도 작다" (below_per_call), none of them (undecided)."""
    found = ratios(records)
    per_call = max(found["ops"], found["bytes"])
    speedup = speedup_in_runs(records["time"])
    said = {
        "between": against(speedup, per_call) == "above"
        and against(speedup, found["flops"]) == "below"
        and per_call < fed_ratio(records),
        "above_flops": against(speedup, found["flops"]) == "above",
        "below_per_call": against(speedup, per_call) == "below",
    }
    said["undecided"] = not any(said.values())
    return same_calls(records) and said[about["variant"]]


def dispatch_share(records, about) -> bool:
    """ "op 비용으로는 캐시 경로 커널 K개의 디스패치만 D s, 잰 시간의 S다": a share, no more
    than the whole."""
    anatomy = records["anatomy"]
    return kernels(anatomy, "with_cache") / rate(anatomy.machine.op) <= measured(
        records, "with_cache"
    )


def lm_head(records, about) -> bool:
    """ "캐시 없는 경로는 lm_head가 ... R행, 쓰는 K행의 밖까지 FLOPs의 S를 쓴다"."""
    steps = records["anatomy"].without_cache.steps
    return sum(step.logits_rows for step in steps) > sum(
        step.logits_rows_keep_one for step in steps
    )


ORACLES: dict[str, Callable[[Mapping, Mapping], bool]] = {
    "time.anatomy_cuts_flops_not_calls": cuts_flops_not_calls,
    "time.anatomy_speedup": speedup_against,
    "time.anatomy_dispatch_share": dispatch_share,
    "time.anatomy_lm_head": lm_head,
}
