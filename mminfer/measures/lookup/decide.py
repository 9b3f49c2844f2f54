"""What lookup.json decides: the counts against their formulas, each K's ids and speed against
the cached generate, and the wide verify call against a one-token step.

Each function takes the record (or one K's :class:`~mminfer.measures.lookup.lookup.Guessing`) and
returns a variant word or whether its words hold, from the raw rounds where it is timed
(mminfer.records.interval.rounds_decision). The lookup job writes each K's ``faster`` with
:func:`faster_of`; the report's sentences, glance row and the checker call these again. Pure
Python, no torch.
"""

from __future__ import annotations

from mminfer.measures.lookup.lookup import (
    Guessing,
    Lookup,
    LookupCase,
    WideCall,
    calls_formula,
    fed_formula,
)
from mminfer.records.interval import rounds_decision

# A decision's order of precedence in a case's sentence: a K decided faster is said first
DECISIONS = ("above", "below", "same", "undecided")


def counts_hold(case: LookupCase) -> bool:
    """The cached generate's calls and tokens fed equal N and P + N - 1; every K's calls, tokens
    fed and cache bytes equal their formulas, and its accepted per call sum to the guesses kept."""
    cached = case.calls_cached == case.new_tokens
    cached = cached and case.fed_cached == case.prompt_len + case.new_tokens - 1
    return cached and all(
        g.calls == calls_formula(g, case.new_tokens)
        and g.fed == fed_formula(g, case.prompt_len)
        and g.cache_bytes == g.formula_bytes
        and g.cache_positions == case.fed_cached
        and sum(g.accepted_per_call) == g.accepted
        for g in case.by_guesses
    )


def ids_of(guessing: Guessing) -> str:
    """The loop's ids against the cached generate's: "same"; "near_tie" (they part where the
    cached generate's top-two gap lies within the rounding tolerance: a verify call may round it
    the other way); "differ" (they part on a clear winner: a bug)."""
    if guessing.same_ids:
        return "same"
    if guessing.top2_margin is not None and guessing.top2_margin <= guessing.tolerance:
        return "near_tie"
    return "differ"


def ids_found(lookup: Lookup) -> str:
    """lookup.ids: "same" (every K on every case gave the cached generate's ids), "near_tie"
    (some parted, each where the cached generate's top-two gap lies within the tolerance),
    "differ" (some parted on a clear winner: a bug)."""
    found = {ids_of(g) for case in lookup.cases.values() for g in case.by_guesses}
    for word in ("differ", "near_tie"):
        if word in found:
            return word
    return "same"


def faster_of(guessing: Guessing) -> str | None:
    """The loop against the cached generate, decided from the raw rounds (each round's cached /
    loop, mminfer.records.interval.rounds_decision): "above" (the loop faster), "below", "same",
    "undecided"; None where it was not timed. lookup.json's ``faster`` is written by it."""
    if not guessing.lookup_runs_s:
        return None
    return rounds_decision(
        guessing.minimind_runs_s, guessing.lookup_runs_s, guessing.runs, guessing.max_runs
    )


def wider_costs(wide: WideCall) -> str:
    """A call of K + 1 tokens against a one-token step, from the raw rounds: "above" (the wide
    call costs more), "below", "same" (within the noise threshold), "undecided"."""
    return rounds_decision(wide.wide_runs_s, wide.step_runs_s, wide.runs, wide.max_runs)


def calls_found(lookup: Lookup) -> str | None:
    """lookup.calls: "fewer" (on the validation prompt some K took fewer calls than the cached
    generate's N), "none" (none did); None without the validation case."""
    case = lookup.cases.get("validation")
    if case is None:
        return None
    return "fewer" if case.fewest_calls().calls < case.calls_cached else "none"


def case_speed(lookup: Lookup, name: str) -> str | None:
    """lookup.<case>: the first of DECISIONS some timed K of the case was decided (faster_of,
    from its raw rounds); None where the case is absent or no K was timed."""
    case = lookup.cases.get(name)
    if case is None:
        return None
    found = {faster_of(g) for g in case.by_guesses} - {None}
    return next((word for word in DECISIONS if word in found), None)


def wide_found(lookup: Lookup) -> str | None:
    """lookup.wide: the widest call of K + 1 tokens against a one-token step, from the raw
    rounds (wider_costs): "above" (it costs more), "below", "same", "undecided"."""
    guessing = lookup.widest()
    return None if guessing is None else wider_costs(guessing.wide)


def counts(lookup: Lookup) -> bool:
    """lookup.counts: every case's counts hold (:func:`counts_hold`); lookup.counts_differ is
    its negation."""
    return all(counts_hold(case) for case in lookup.cases.values())


def counts_differ(lookup: Lookup) -> bool:
    """lookup.counts_differ: some case's counts part from their formulas."""
    return not counts(lookup)


def glance(lookup: Lookup) -> str:
    """Lookup glance: "differ" (ids part on a clear winner), "faster" (fewer calls on
    the validation prompt and some K decided faster there), "fewer" (fewer calls, no K decided
    faster), "none" (no fewer calls)."""
    if ids_found(lookup) == "differ":
        return "differ"
    if calls_found(lookup) != "fewer":
        return "none"
    if case_speed(lookup, "validation") == "above":
        return "faster"
    return "fewer"


def stored_decisions(lookup: Lookup) -> dict[str, tuple[object, object]]:
    """lookup.json's stored decisions (each timed K's ``faster``) beside their recomputation from
    the rounds (the checker's)."""
    return {
        f"cases.{name}.K={g.guesses}.faster": (g.faster, faster_of(g))
        for name, case in lookup.cases.items()
        for g in case.by_guesses
        if g.lookup_runs_s
    }
