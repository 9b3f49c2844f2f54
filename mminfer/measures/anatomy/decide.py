"""What anatomy.json decides: the cache's FLOPs against its calls, the counter against the
formula, the probes' doubts, and each path's split: which term binds, whether the model adds up,
each term's share.

Each function takes the record (or a path's :class:`~mminfer.measures.anatomy.anatomy.PathSplit`,
its arithmetic against time.json's interval, which the report section joins) and returns a
variant word or whether its words hold. Pure Python, no torch.
"""

from __future__ import annotations

from mminfer.measures.anatomy.anatomy import PATHS, Anatomy, PathSplit
from mminfer.records.interval import joined


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
