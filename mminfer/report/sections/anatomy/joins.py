"""anatomy.json beside time.json and sweep.json: the term that binds each path, each share.

The fixed step beside the sweep's intercept too. A join of two rules' records lives in its report
section (.importlinter); pure Python, no torch.
"""

from __future__ import annotations

from mminfer.measures.anatomy import decide
from mminfer.measures.anatomy.anatomy import PATHS, Anatomy, PathSplit
from mminfer.measures.sweep.sweep import Sweep
from mminfer.measures.time.time import Timing
from mminfer.records.interval import Interval, look_level, median_interval


def comparable(anatomy: Anatomy, time: Timing | None) -> str:
    """Whether time.json can be split by anatomy.json: "yes", or why not ("absent",
    "untrusted", "other_length": another P or N, "other_model", "other_threads")."""
    if time is None:
        return "absent"
    if time.verdict == "untrusted":
        return "untrusted"
    if (time.prompt_len, time.new_tokens) != (anatomy.prompt_len, anatomy.new_tokens):
        return "other_length"
    if time.run.sha256 != anatomy.run.sha256 or time.run.backend != anatomy.run.backend:
        return "other_model"
    if time.threads != anatomy.threads or time.run.device != anatomy.run.device:
        return "other_threads"
    return "yes"


def measured_intervals(time: Timing) -> dict[str, Interval]:
    """time.json's interval of each path, by path."""
    return {"with_cache": time.with_cache_interval, "without_cache": time.without_cache_interval}


def split_of(anatomy: Anatomy, time: Timing | None, path: str) -> PathSplit | None:
    """Path ``path`` split against time.json's interval; None where time.json is not
    :func:`comparable`."""
    if comparable(anatomy, time) != "yes":
        return None
    return anatomy.split(path, measured_intervals(time)[path])


def binds(anatomy: Anatomy, time: Timing | None, path: str) -> str | None:
    """anatomy.binds: the term the intervals decide binds path ``path`` (:func:`binding`)."""
    split = split_of(anatomy, time, path)
    return None if split is None else decide.binding(split)


def fits(anatomy: Anatomy, time: Timing | None, path: str) -> str | None:
    """anatomy.fits: where path ``path``'s model lies against the measured time (:func:`fit`); a
    model short of it on a busy machine names the load first ("under_busy_time": time.json's
    runs busy, "under_busy_probes": the probes')."""
    split = split_of(anatomy, time, path)
    if split is None:
        return None
    found = decide.fit(split)
    if found == "under" and time.contention is not None and time.contention.busy:
        return "under_busy_time"
    if found == "under" and anatomy.contention is not None and anatomy.contention.busy:
        return "under_busy_probes"
    return found


def share(anatomy: Anatomy, time: Timing | None, path: str, term: str) -> str | None:
    """anatomy.share: term ``term``'s share of path ``path``'s measured time (:func:`share_of`)."""
    split = split_of(anatomy, time, path)
    return None if split is None else decide.share_of(split, term)


def glance_binding(anatomy: Anatomy, time: Timing | None) -> str | None:
    """anatomy.glance: both paths' binding terms, "<with_cache>/<without_cache>"."""
    found = [binds(anatomy, time, path) for path in PATHS]
    return None if None in found else "/".join(found)


def fixed_step(time: Timing) -> Interval:
    """The minimal-width generate's time per call of forward (time.json's narrow side over its N
    calls): a lower bound of the fixed cost per step, its interval at the timing's level."""
    runs = [seconds / time.new_tokens for seconds in time.narrow_runs_s]
    return median_interval(runs, look_level(time.runs, time.max_runs))


def fixed_beside_sweep(anatomy: Anatomy, sweep: Sweep | None, time: Timing | None) -> str | None:
    """anatomy.fixed_beside_sweep's variant: the sweep's fitted per-step intercept (each call's
    weight reads in it) against time.json's fixed step plus the weight bytes of a cached call
    over the bandwidth at its working set: "explained" where it lies within their intervals'
    sum, "unexplained" where outside; None without a holding fit or time.json."""
    if sweep is None or time is None or not sweep.fit.holds:
        return None
    low, high = fixed_plus_weights(
        fixed_step(time), anatomy, anatomy.probes()["bandwidth_with_cache"].per_s_interval
    )
    return "explained" if low <= sweep.fit.fixed_s_with_cache <= high else "unexplained"


def fixed_plus_weights(step: Interval, anatomy: Anatomy, bandwidth: Interval):
    """(low, high): the fixed step plus one cached call's weight bytes at the bandwidth."""
    weights = anatomy.with_cache.steps[-1].bytes_parts["weights"]
    return step.low + weights / bandwidth.high, step.high + weights / bandwidth.low
