"""What anatomy.json decides: the cache's FLOPs against its calls, the counter against the
formula, the probes' doubts, and each path's split: which term binds, whether the model adds up,
each term's share.

Each function takes the record (or a path's :class:`~mminfer.measures.anatomy.anatomy.PathSplit`,
its arithmetic against time.json's interval, which the report section joins) and returns a
variant word or whether its words hold. Pure Python, no torch.
"""

from __future__ import annotations

from mminfer.measures.anatomy.anatomy import PATHS, Anatomy, PathSplit
from mminfer.measures.sweep.sweep import Sweep
from mminfer.measures.time.time import Timing
from mminfer.records.interval import Interval, joined, look_level, median_interval


def fewer_flops_same_calls(anatomy: Anatomy) -> bool:
    """anatomy.fewer_flops_same_calls: the cache cuts the FLOPs, not the calls of forward."""
    cached, uncached = anatomy.with_cache.totals, anatomy.without_cache.totals
    return cached.calls == uncached.calls and uncached.flops_formula > cached.flops_formula


def formula_equals_counter(anatomy: Anatomy) -> bool:
    """anatomy.formula_equals_counter: every call's counted FLOPs are the formula's less the
    parts the counter has no entry for."""
    return all(
        step.flops_counted == step.flops_formula - step.flops_unseen
        for name in PATHS
        for step in anatomy.path(name).steps
    )


def probes_doubt(anatomy: Anatomy) -> str | None:
    """anatomy.probes: "unreliable" where some probe's runs fall into two groups (its recorded
    flag), else "spread" where some probe's runs spread past noisy_cv; None where none does."""
    if anatomy.unreliable_probes():
        return "unreliable"
    if anatomy.noisy_probes():
        return "spread"
    return None


def probes_busy(anatomy: Anatomy) -> bool:
    """anatomy.probes_busy: the machine was busy while the probes ran."""
    return anatomy.contention is not None and anatomy.contention.busy


def profiled(path: str):
    """anatomy.profile_<path>'s predicate: the path was profiled."""

    def holds(anatomy: Anatomy) -> bool:
        return anatomy.profile is not None and path in anatomy.profile

    return holds


def binding(split: PathSplit) -> str:
    """The term whose interval lies wholly above both others': "dispatch", "arithmetic",
    "memory"; "unreliable" where a probe ran in two groups, else "undecided"."""
    if split.unreliable:
        return "unreliable"
    terms = list(split.terms.values())
    if not joined(0.0, 0.0, 0.0, terms).decisive:
        return "undecided"
    for term, found in split.terms.items():
        if all(found.low > other.high for name, other in split.terms.items() if name != term):
            return term
    return "undecided"


def fit(split: PathSplit) -> str:
    """Where modeled / measured lies against 1 ± the tolerance: "adds_up" (wholly within),
    "under" (wholly below: the model short), "over" (wholly above); "unreliable",
    "undecided"."""
    if split.unreliable:
        return "unreliable"
    ratio = split.ratio
    if not ratio.decisive:
        return "undecided"
    if ratio.high < 1 - split.tolerance:
        return "under"
    if ratio.low > 1 + split.tolerance:
        return "over"
    if 1 - split.tolerance <= ratio.low and ratio.high <= 1 + split.tolerance:
        return "adds_up"
    return "undecided"


def share_of(split: PathSplit, term: str) -> str:
    """A term's share of the measured time: "share" (wholly below 100 %), "exceeds" (wholly
    above: the probe underestimates what generate achieved), "unreliable", "undecided"."""
    if term in split.unreliable:
        return "unreliable"
    share = split.share_interval(term)
    if not share.decisive:
        return "undecided"
    if share.high < 1:
        return "share"
    if share.low > 1:
        return "exceeds"
    return "undecided"


def path_profiled(anatomy: Anatomy, path: str) -> bool:
    """anatomy.path_profiled: path ``path`` was profiled."""
    return anatomy.profile is not None and path in anatomy.profile


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
    return None if split is None else binding(split)


def fits(anatomy: Anatomy, time: Timing | None, path: str) -> str | None:
    """anatomy.fits: where path ``path``'s model lies against the measured time (:func:`fit`); a
    model short of it on a busy machine names the load first ("under_busy_time": time.json's
    runs busy, "under_busy_probes": the probes')."""
    split = split_of(anatomy, time, path)
    if split is None:
        return None
    found = fit(split)
    if found == "under" and time.contention is not None and time.contention.busy:
        return "under_busy_time"
    if found == "under" and anatomy.contention is not None and anatomy.contention.busy:
        return "under_busy_probes"
    return found


def share(anatomy: Anatomy, time: Timing | None, path: str, term: str) -> str | None:
    """anatomy.share: term ``term``'s share of path ``path``'s measured time (:func:`share_of`)."""
    split = split_of(anatomy, time, path)
    return None if split is None else share_of(split, term)


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
