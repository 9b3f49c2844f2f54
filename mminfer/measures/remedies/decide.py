"""What remedies.json decides: each remedy's saving against MiniMind's cached generate and against
the control loop, logits_to_keep's, which remedy saves most, compile's pay-back, and the floor.

Each function takes the record (or one remedy) and returns a variant word, the names it lists, or
the figure its words print, from the raw rounds (mminfer.records.interval.rounds_decision). The
remedies job writes ``saves``, ``own_saves`` and ``compile_cost`` with these functions; the
report's sentences, glance row and the checker call them again. Pure Python, no torch.
"""

from __future__ import annotations

from mminfer.measures.remedies.remedies import CompileCost, Remedies, Remedy, saved_interval
from mminfer.records.interval import (
    Interval,
    against,
    joined,
    look_level,
    median_interval,
    rounds_decision,
)


def saving_against(
    remedy: Remedy, reference_runs_s: list[float], remedy_runs_s: list[float]
) -> str | None:
    """A remedy's saving against a reference side timed in the same rounds (MiniMind's cached
    generate, or the control loop), decided from the raw rounds (each round's reference / remedy,
    mminfer.records.interval.rounds_decision): "above" (it saves), "below", "same", "undecided";
    None where it was not timed against it or its ids differ (a faster wrong answer is no
    remedy). remedies.json's ``saves`` and ``own_saves`` are written by it (the measure), the
    sentences, the glance and the checker call it."""
    if not reference_runs_s or not remedy.same_ids:
        return None
    return rounds_decision(reference_runs_s, remedy_runs_s, remedy.runs, remedy.max_runs)


def saves_of(remedy: Remedy) -> str | None:
    """A remedy's saving against MiniMind's cached generate (:func:`saving_against`)."""
    return saving_against(remedy, remedy.minimind_runs_s, remedy.remedy_runs_s)


def own_saves_of(remedy: Remedy) -> str | None:
    """A remedy's own saving, against the control loop in the same rounds; None for the control
    itself (:func:`saving_against`)."""
    return saving_against(remedy, remedy.control_runs_s, remedy.own_runs_s)


def keep_of(remedies: Remedies) -> str | None:
    """remedies.keep: logits_to_keep=1's saving on the uncached path, decided from its rounds."""
    keep = remedies.logits_to_keep
    if keep is None or not keep.same_ids:
        return None
    return rounds_decision(keep.full_runs_s, keep.kept_runs_s, keep.runs, keep.max_runs)


def differing(remedies: Remedies) -> list[str]:
    """remedies.differ: the remedies whose greedy ids part from MiniMind's (a bug, never a
    saving)."""
    return [r.name for r in remedies.remedies.values() if r.applies and r.same_ids is False]


def compile_cost_of(first_call_s: float, remedy: Remedy, steps: int) -> CompileCost:
    """The compile's cost from the first compiled generation and the compiled side's runs (see
    CompileCost); the measure writes it, the checker recomputes it."""
    level = look_level(remedy.runs, remedy.max_runs)
    warm = median_interval(remedy.remedy_runs_s, level)
    compile_s = joined(
        first_call_s - warm.median, first_call_s - warm.high, first_call_s - warm.low, [warm]
    )
    saved = saved_interval(remedy.minimind_runs_s, remedy.remedy_runs_s, steps, level)
    break_even = None
    if saves_of(remedy) == "above" and saved.low > 0 and compile_s.low > 0:
        break_even = joined(
            compile_s.median / saved.median,
            compile_s.low / saved.high,
            compile_s.high / saved.low,
            [warm, saved],
        )
    return CompileCost(
        first_call_s=first_call_s, compile_interval=compile_s, break_even_interval=break_even
    )


def pays_back(remedies: Remedies) -> str | None:
    """remedies.compile_cost: "tokens" (the break-even has its interval), "unknown" (compile ran
    with MiniMind's ids but its saving or its cost is not decided above 0); None where compile
    did not run."""
    cost = remedies.compile_cost
    if cost is None:
        return None
    return "tokens" if cost.break_even_interval is not None else "unknown"


def above_floor(remedies: Remedies, floor: Interval | None) -> str | None:
    """remedies.floor: the compiled step over the floor per step against 1, at its level:
    "above" (wholly above 1: the step costs more than reading the weights once), "below" (wholly
    below 1: faster than the weights can be read, so the floor or the step is not what it seems),
    "undecided" (the interval holds 1 or does not reach its level: a bound held inside a wide
    interval is not reached); None without a timed compiled step or a floor."""
    if floor is None or remedies.compiled_step() is None:
        return None
    return against(remedies.compiled_over(floor), 1.0)


def most_saving(remedies: Remedies) -> str | None:
    """The remedy whose rounds decide it saves (:func:`saves_of`) with the largest median
    saving per step; None where none does."""
    saving = [r for r in remedies.remedies.values() if saves_of(r) == "above"]
    if not saving:
        return None
    return max(saving, key=lambda r: r.saved_per_step_interval.median).name


def most(remedies: Remedies) -> str:
    """remedies.most: "saves" where some remedy's rounds decide a saving (:func:`most_saving`
    names the largest), else "none"."""
    return "saves" if most_saving(remedies) else "none"


def differs(remedies: Remedies) -> bool:
    """remedies.differ: some remedy's greedy ids part from MiniMind's (:func:`differing`)."""
    return bool(differing(remedies))


def stored_decisions(remedies: Remedies) -> dict[str, tuple[object, object]]:
    """remedies.json's stored decisions (each remedy's ``saves`` and ``own_saves``,
    logits_to_keep's ``saves``, compile's ``compile_cost``) beside their recomputation from the
    rounds (the checker's)."""
    found = {}
    for remedy in remedies.remedies.values():
        found[f"remedies.{remedy.name}.saves"] = (remedy.saves, saves_of(remedy))
        found[f"remedies.{remedy.name}.own_saves"] = (remedy.own_saves, own_saves_of(remedy))
    keep = remedies.logits_to_keep
    if keep is not None and keep.same_ids:
        found["logits_to_keep.saves"] = (keep.saves, keep_of(remedies))
    cost = remedies.compile_cost
    if cost is not None:
        again = compile_cost_of(
            cost.first_call_s, remedies.remedies["compile"], remedies.new_tokens
        )
        found["compile_cost"] = (cost, again)
    return found


def saving(remedies: Remedies, name: str) -> str | None:
    """remedies.saving: the remedy ``name``'s saving against MiniMind (:func:`saves_of`); None
    where the record has no such remedy."""
    remedy = remedies.remedies.get(name)
    return None if remedy is None else saves_of(remedy)


def own_saving(remedies: Remedies, name: str) -> str | None:
    """remedies.own_saving: the remedy ``name``'s saving against the control loop
    (:func:`own_saves_of`); None where the record has no such remedy."""
    remedy = remedies.remedies.get(name)
    return None if remedy is None else own_saves_of(remedy)
