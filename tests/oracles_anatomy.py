"""The oracles of anatomy.json's sentences: each recomputes its words from the counted steps, the
probes' runs and time.json's rounds on its own (every interval it reads held together at
FAMILY_LEVEL), never with mminfer.measures.anatomy.decide, which the sentences call.
``ORACLES[key](records, about)``: tests/oracles.py merges them.
"""

from __future__ import annotations

from oracles_timing import judged_by

from mminfer.measures.anatomy.anatomy import CATEGORIES, PATHS, Anatomy
from mminfer.measures.sweep.sweep import Sweep
from mminfer.measures.time.time import Timing
from mminfer.records.interval import FAMILY_LEVEL, Interval, look_level, median_interval
from mminfer.records.machine import is_busy, two_groups
from mminfer.records.spread import coefficient_of_variation
from mminfer.report.sections.anatomy.joins import fixed_plus_weights


def flops_and_calls_in_steps(anatomy: Anatomy) -> bool:
    """anatomy.fewer_flops_same_calls's check, from the counted steps: both paths call forward
    as often (one step a call), and the uncached steps' formula FLOPs add up to more."""
    cached, uncached = anatomy.with_cache.steps, anatomy.without_cache.steps
    fewer = sum(step.flops_formula for step in uncached) > sum(
        step.flops_formula for step in cached
    )
    return len(cached) == len(uncached) and fewer


def probes_doubt_in_runs(anatomy: Anatomy, chosen: str) -> bool:
    """anatomy.probes's check, from each probe's runs: the named probes are exactly those whose
    runs part into two groups (or, for "spread", spread past noisy_cv)."""
    probes = anatomy.probes()
    parted = [name for name, speed in probes.items() if two_groups(speed.runs_s)]
    if chosen == "unreliable":
        return bool(parted) and parted == anatomy.unreliable_probes()
    spread = [
        name
        for name, speed in probes.items()
        if coefficient_of_variation(speed.runs_s) > anatomy.machine.noisy_cv
    ]
    return not parted and bool(spread) and spread == anatomy.noisy_probes()


def profile_in_rounds(path: str):
    """anatomy.profile_<path>'s check, from the rounds: in each, the rest (the wall minus the
    categories' seconds, recomputed) is never negative; the largest parts named are those of the
    medians recomputed from the rounds, and the rest's share printed is their median's."""

    def check(anatomy: Anatomy) -> bool:
        profile = anatomy.profile[path]
        rests = [r["wall"] - sum(r[c] for c in CATEGORIES) for r in profile.rounds]
        if min(rests) < -1e-9 * max(r["wall"] for r in profile.rounds):
            return False
        medians = {c: median_interval([r[c] for r in profile.rounds]).median for c in CATEGORIES}
        named = profile.largest()
        largest = sorted(medians, key=medians.get, reverse=True)[: len(named)]
        shares = [rest / r["wall"] for rest, r in zip(rests, profile.rounds)]
        share = median_interval(shares).median
        return largest == named and abs(share - profile.rest_share().median) <= 1e-9

    return check


def terms_in_runs(anatomy: Anatomy, path: str) -> dict[str, tuple[Interval, bool]]:
    """Each term of ``path`` from its probe's runs: every run's seconds scaled to the term's work
    (its interval at FAMILY_LEVEL), and whether the runs part into two groups."""
    probes = anatomy.probes()
    work = anatomy.term_work(path)
    found = {}
    for term, name in anatomy.term_probes(path).items():
        speed = probes[name]
        seconds = [run_s * work[term] / speed.work for run_s in speed.runs_s]
        found[term] = (median_interval(seconds, FAMILY_LEVEL), two_groups(speed.runs_s))
    return found


def verdicts_in_runs(anatomy: Anatomy, time: Timing, path: str) -> dict[str, str]:
    """binding, fit and each term's share of ``path``, decided from the raw runs alone: a decision
    only where every interval it reads holds together at FAMILY_LEVEL (their misses summed)."""
    found = terms_in_runs(anatomy, path)
    runs = getattr(time, f"{path}_runs_s")
    measured = median_interval(runs, look_level(time.runs, time.max_runs))
    terms = {term: seconds for term, (seconds, _) in found.items()}
    parted = {term for term, (_, two) in found.items() if two}
    missed = sum(1 - seconds.coverage for seconds in terms.values())
    missed_all = missed + 1 - measured.coverage
    floor = 1 - FAMILY_LEVEL + 1e-12
    verdicts = {"binding": "undecided", "fit": "undecided"}
    if missed <= floor:
        for term, seconds in terms.items():
            if all(seconds.low > terms[other].high for other in terms if other != term):
                verdicts["binding"] = term
    low = terms["dispatch"].low + max(terms["arithmetic"].low, terms["memory"].low)
    high = terms["dispatch"].high + max(terms["arithmetic"].high, terms["memory"].high)
    low, high = low / measured.high, high / measured.low
    tolerance = anatomy.split_tolerance
    if missed_all <= floor and measured.runs > 1:
        if high < 1 - tolerance:
            verdicts["fit"] = "under"
        elif low > 1 + tolerance:
            verdicts["fit"] = "over"
        elif 1 - tolerance <= low and high <= 1 + tolerance:
            verdicts["fit"] = "adds_up"
    for term, seconds in terms.items():
        share = "undecided"
        missed_share = 1 - seconds.coverage + 1 - measured.coverage
        if missed_share <= floor and measured.runs > 1:
            if seconds.high / measured.low < 1:
                share = "share"
            elif seconds.low / measured.high > 1:
                share = "exceeds"
        verdicts[term] = "unreliable" if term in parted else share
    if parted:
        verdicts["binding"] = verdicts["fit"] = "unreliable"
    return verdicts


def binding_in_runs(path: str):
    """anatomy.binds_<path>'s check."""

    def check(anatomy: Anatomy, time: Timing, chosen: str) -> bool:
        return verdicts_in_runs(anatomy, time, path)["binding"] == chosen

    return check


def fit_in_runs(path: str):
    """anatomy.fit_<path>'s check; a busy variant also needs the contention it names."""

    def check(anatomy: Anatomy, time: Timing, chosen: str) -> bool:
        busy = {"under_busy_time": time.contention, "under_busy_probes": anatomy.contention}
        if chosen in busy:
            load = busy[chosen]
            named = load is not None and is_busy(load.cpu_share, load.cpu_pressure)
            return named and verdicts_in_runs(anatomy, time, path)["fit"] == "under"
        return verdicts_in_runs(anatomy, time, path)["fit"] == chosen

    return check


def share_in_runs(path: str, term: str):
    """anatomy.<term>_share_<path>'s check."""

    def check(anatomy: Anatomy, time: Timing, chosen: str) -> bool:
        return verdicts_in_runs(anatomy, time, path)[term] == chosen

    return check


def glance_in_runs(anatomy: Anatomy, time: Timing, chosen: str) -> bool:
    """anatomy.glance's check: both paths' binding terms from the raw runs."""
    found = [verdicts_in_runs(anatomy, time, path)["binding"] for path in PATHS]
    return "/".join(found) == chosen


def fixed_beside_sweep_in_runs(anatomy: Anatomy, sweep: Sweep, time: Timing, chosen: str) -> bool:
    """anatomy.fixed_beside_sweep's check: the fixed step's and the bandwidth probe's intervals
    recomputed from their runs, the intercept placed against their sum again."""
    probe = anatomy.probes()["bandwidth_with_cache"]
    rates_of = median_interval([probe.work / run for run in probe.runs_s], FAMILY_LEVEL)
    step = median_interval(
        [seconds / time.new_tokens for seconds in time.narrow_runs_s],
        look_level(time.runs, time.max_runs),
    )
    low, high = fixed_plus_weights(step, anatomy, rates_of)
    inside = low <= sweep.fit.fixed_s_with_cache <= high
    return sweep.fit.holds and inside == (chosen == "explained")


def per_path(make, *names: str):
    """The oracle of a decision asked per path (and per term: ``about["path"]``, ``["term"]``),
    ``make(path, ...)`` the re-derivation for that path."""

    def oracle(records, about) -> bool:
        given = [about[key] for key in ("path", "term") if key in about]
        return judged_by(make(*given), *names)(records, about)

    return oracle


ORACLES = {
    "anatomy.fewer_flops_same_calls": judged_by(flops_and_calls_in_steps, "anatomy"),
    "anatomy.probes_doubt": judged_by(probes_doubt_in_runs, "anatomy"),
    "anatomy.glance_binding": judged_by(glance_in_runs, "anatomy", "time"),
    "anatomy.fixed_beside_sweep": judged_by(fixed_beside_sweep_in_runs, "anatomy", "sweep", "time"),
    "anatomy.path_profiled": per_path(profile_in_rounds, "anatomy"),
    "anatomy.binds": per_path(binding_in_runs, "anatomy", "time"),
    "anatomy.fits": per_path(fit_in_runs, "anatomy", "time"),
    "anatomy.share": per_path(share_in_runs, "anatomy", "time"),
}
