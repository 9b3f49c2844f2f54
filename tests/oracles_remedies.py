"""The oracles of remedies.json's sentences: each recomputes its words from the raw rounds and
holds them to the decision stored, apart from mminfer.measures.remedies.decide's intervals.
``ORACLES[key](records, about)``: tests/oracles.py merges them.
"""

from __future__ import annotations

from oracles_timing import judged_by

from mminfer.measures.anatomy.anatomy import Anatomy
from mminfer.measures.remedies import decide
from mminfer.measures.remedies.remedies import Remedies, saved_interval
from mminfer.records.interval import FAMILY_LEVEL, joined, look_level, median_interval
from mminfer.report.sections.remedies.joins import REMEDY_PARTS, profile_part_s


def most_saving_in_runs(remedies: Remedies, chosen: str) -> bool:
    """remedies.most's check: "saves" is written of the remedy whose rounds decide a saving with
    the largest median saving per step recomputed from its runs; "none" where none does."""
    saving = {}
    for remedy in remedies.remedies.values():
        if decide.saves_of(remedy) == "above":
            level = look_level(remedy.runs, remedy.max_runs)
            runs = (remedy.minimind_runs_s, remedy.remedy_runs_s)
            saving[remedy.name] = saved_interval(*runs, remedies.new_tokens, level).median
    if chosen == "none":
        return not saving
    return bool(saving) and max(saving, key=saving.get) == decide.most_saving(remedies)


def keep_supported(remedies: Remedies, chosen: str) -> bool:
    """remedies.keep's check: the decision the raw rounds give, written and stored."""
    return decide.keep_of(remedies) == chosen == remedies.logits_to_keep.saves


def differing_untimed(remedies: Remedies) -> bool:
    """remedies.differ's check: each remedy whose ids parted ran no timed round (its time is not
    compared), and it parted at a step."""
    parted = [r for r in remedies.remedies.values() if r.applies and r.same_ids is False]
    return bool(parted) and all(
        not r.remedy_runs_s and r.first_divergence is not None for r in parted
    )


def pays_back_in_runs(remedies: Remedies, chosen: str) -> bool:
    """remedies.compile_cost's check: the cost recomputed from the first call and the compiled
    runs gives the variant written and the stored interval."""
    cost = remedies.compile_cost
    again = decide.compile_cost_of(
        cost.first_call_s, remedies.remedies["compile"], remedies.new_tokens
    )
    found = "tokens" if again.break_even_interval is not None else "unknown"
    return found == chosen and again == cost


def against_parts_supported(remedies: Remedies, anatomy: Anatomy, chosen: str) -> bool:
    """remedies.within_parts' check: each round's saving recomputed from the runs against the
    profiled part, independent of the stored intervals."""
    found = {}
    for name in REMEDY_PARTS:
        remedy, part = remedies.remedies.get(name), profile_part_s(anatomy, name)
        if remedy is not None and part is not None and remedy.applies and remedy.same_ids:
            saved = [b - a for a, b in zip(remedy.remedy_runs_s, remedy.minimind_runs_s)]
            level = look_level(remedy.runs, remedy.max_runs)
            found[name] = median_interval(saved, level).low > part
    return chosen == ("beyond" if any(found.values()) else "within")


def floor_supported(remedies: Remedies, anatomy: Anatomy, chosen: str) -> bool:
    """remedies.floor's check: the probe's rate recomputed from its runs, the compiled step
    from its runs, placed against each other again."""
    probe = anatomy.probes()["bandwidth_with_cache"]
    rate = median_interval([probe.work / run for run in probe.runs_s], FAMILY_LEVEL)
    weights = anatomy.with_cache.steps[-1].bytes_parts["weights"]
    floor = joined(weights / rate.median, weights / rate.high, weights / rate.low, [rate])
    return probe.reliable and decide.above_floor(remedies, floor) == chosen


def saving_supported(name: str, suffix: str):
    """remedies.<name><suffix>'s oracle: the rounds' decision, the words written and the one
    stored (``saves``, against MiniMind; ``own_saves``, against the control loop) agree."""
    decided, stored = {"": (decide.saves_of, "saves"), "_own": (decide.own_saves_of, "own_saves")}[
        suffix
    ]

    def oracle(remedies: Remedies, chosen: str) -> bool:
        remedy = remedies.remedies[name]
        return decided(remedy) == chosen == getattr(remedy, stored)

    return judged_by(oracle, "remedies")


ORACLES = {
    "remedies.most": judged_by(most_saving_in_runs, "remedies"),
    "remedies.keep_of": judged_by(keep_supported, "remedies"),
    "remedies.differs": judged_by(differing_untimed, "remedies"),
    "remedies.pays_back": judged_by(pays_back_in_runs, "remedies"),
    "remedies.against_parts": judged_by(against_parts_supported, "remedies", "anatomy"),
    "remedies.against_floor": judged_by(floor_supported, "remedies", "anatomy"),
    "remedies.saving": lambda records, about: saving_supported(about["name"], "")(records, about),
    "remedies.own_saving": lambda records, about: saving_supported(about["name"], "_own")(
        records, about
    ),
}
