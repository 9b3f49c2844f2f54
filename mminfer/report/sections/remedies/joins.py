"""remedies.json beside anatomy.json: each saving against its profiled part, and the floor.

A join of two rules' records lives in its report section (.importlinter); pure Python, no torch.
"""

from __future__ import annotations

from mminfer.measures.anatomy.anatomy import Anatomy
from mminfer.measures.remedies import decide
from mminfer.measures.remedies.remedies import Remedies
from mminfer.records.interval import Interval

# The profile's category (anatomy.json profile.with_cache.parts_s, mminfer.measures.anatomy's
# CATEGORIES) each remedy removes: the cache's torch.cat for the in-place cache, repeat_kv's copies
# for the grouped attention.
REMEDY_PARTS = {
    "in_place_cache": "kv_cat",
    "gqa_without_repeat_kv": "repeat_kv",
}


def profile_part_s(anatomy: Anatomy | None, remedy: str) -> float | None:
    """The cached path's profiled seconds of ``remedy``'s category in step 1's generation (the
    rounds' median); None where anatomy.json has no profile."""
    if anatomy is None or anatomy.profile is None or "with_cache" not in anatomy.profile:
        return None
    return anatomy.profile["with_cache"].parts_s.get(REMEDY_PARTS[remedy])


def beyond_parts(remedies: Remedies, anatomy: Anatomy | None) -> dict[str, bool]:
    """Each remedy that ran with MiniMind's ids and whose category the profile holds: whether its
    recorded saving's interval (per step, times the steps) lies wholly above the category's
    profiled time (True: the two disagree)."""
    found = {}
    for name in REMEDY_PARTS:
        remedy, part = remedies.remedies.get(name), profile_part_s(anatomy, name)
        if remedy is None or part is None or not (remedy.applies and remedy.same_ids):
            continue
        found[name] = remedy.saved_per_step_interval.low * remedies.new_tokens > part
    return found


def against_parts(remedies: Remedies, anatomy: Anatomy | None = None) -> str | None:
    """remedies.against_parts, beside anatomy.json's profile: "within" (every compared saving at
    most its category's time within the intervals), "beyond" (some saving wholly above it), None
    (nothing to compare)."""
    if anatomy is None or remedies.new_tokens != anatomy.new_tokens:
        return None
    found = beyond_parts(remedies, anatomy)
    return None if not found else ("beyond" if any(found.values()) else "within")


def floor_of(anatomy: Anatomy | None) -> Interval | None:
    """anatomy.json's floor per step (Anatomy.weights_floor); None without anatomy.json or its
    bandwidth probe at the cached working set, or where that probe's runs fall into two groups
    (nothing is concluded from an unreliable probe)."""
    probe = None if anatomy is None else anatomy.probes().get("bandwidth_with_cache")
    if probe is None or not probe.reliable:
        return None
    return anatomy.weights_floor()


def against_floor(remedies: Remedies, anatomy: Anatomy | None = None) -> str | None:
    """remedies.against_floor: the compiled step against anatomy.json's floor (above_floor), at the
    same N; None where either is missing."""
    if anatomy is None or remedies.new_tokens != anatomy.new_tokens:
        return None
    return decide.above_floor(remedies, floor_of(anatomy))
