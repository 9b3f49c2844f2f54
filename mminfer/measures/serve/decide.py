"""What serve.json decides: the batches' steps against each other, the fit and the users' bound.

Each function takes the record and returns a variant word, a list of the batches it names, or the
figure its words print, from the passes (paired: every pass visits every batch). A decision over
several steps at once is made at Holm's step-down levels (:func:`step_down`). Its join with
sweep.json is its report section's. The report's sentences, glance row, pictures and the checker
call these. Pure Python, no torch.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

from mminfer.measures.serve.serve import BatchStep, Cliff, Serve, ServeFit, tokens_ratio
from mminfer.records import decided_bands
from mminfer.records.interval import FAMILY_LEVEL, against, ratio_decision, ratio_interval


def step_down(decide: Callable[[int, float], str], count: int, holm: bool) -> list[str]:
    """Each of ``count`` tests' word (``decide(index, level)``: "undecided" where the passes do
    not decide it), each at FAMILY_LEVEL, or (``holm``) at Holm's step-down levels over all of
    them: with L tests left undecided, each at 1 - 10 % / L, until no more is decided, so that
    every test decided together is right with 90 %."""
    found: dict[int, str] = {}
    while len(found) < count:
        level = 1 - (1 - FAMILY_LEVEL) / (count - len(found)) if holm else FAMILY_LEVEL
        new = {}
        for index in range(count):
            word = "undecided" if index in found else decide(index, level)
            if word != "undecided":
                new[index] = word
        found |= new
        if not new or not holm:
            break
    return [found.get(index, "undecided") for index in range(count)]


def cliff_cache(serve: Serve, cliff: Cliff) -> bool:
    """serve.cliff_cache: the cliff's likely cause is a device cache the step's memory crossed,
    and every level named lies between the step's bytes before and after (one named at least):
    the table's cause cell."""
    between = all(
        cliff.step_bytes_before < level.bytes <= cliff.step_bytes_after for level in cliff.crossed
    )
    return cliff.likely_cause == "cache" and bool(cliff.crossed) and between


def experts_of(serve: Serve) -> str | None:
    """serve.experts: a MoE model's experts a decode step touches (routing counts, not times:
    exact), at the largest batch against the smallest, "grow" or the "same"; None where a batch
    has no count or they fell."""
    experts = [row.experts_touched for row in serve.batches]
    if not experts or None in experts or experts[-1] < experts[0]:
        return None
    return "grow" if experts[-1] > experts[0] else "same"


def grew(before: BatchStep, after: BatchStep, growth: float, level: float = FAMILY_LEVEL) -> str:
    """ "grew" (tokens per second up by more than ``growth`` per doubling), "flat" or
    "undecided", from the passes' paired ratio at ``level``."""
    doublings = math.log2(after.batch / before.batch)
    found = against(tokens_ratio(after, before, level), (1 + growth) ** doublings)
    return {"above": "grew", "below": "flat"}.get(found, "undecided")


def growth_of(serve: Serve) -> str | None:
    """serve.growth's variant: "every" step up grew, growth "stops" from a batch below the
    largest (every step up from there decided flat), "mixed" (every step decided at Holm's
    levels, some grew, some not), else "undecided"; None with one batch.

    "every" is one claim on all the steps (it is wrong only where some step's own decision is,
    so each at 90 % keeps it within 10 %: an intersection-union test); "stops" tests the steps
    one by one from the largest down and stops at the first not decided flat (a fixed
    sequence: 90 % each, 10 % in all). "mixed" names which steps grew and which did not, so
    each step is a claim of its own: Holm over the steps, which 5 passes (at best 93.75 % a
    step) cannot reach for two steps or more: there it says so ("uncorrected": each step decided
    alone, not all together)."""
    steps = [found for _, _, found in growth_steps(serve)]
    if not steps:
        return None
    if all(found == "grew" for found in steps):
        return "every"
    if growth_stops_from(serve) < serve.batches[-1].batch:
        return "stops"
    if all(found != "undecided" for _, _, found in growth_steps(serve, holm=True)):
        return "mixed"
    return "uncorrected" if "undecided" not in steps else "undecided"


def named_of(together: list, alone: list) -> str | None:
    """dips', cliffs' and larger_faster's variant: "named" (some batch decided at Holm's levels
    over every test), "uncorrected" (none, but one decided alone at 90 %), else None."""
    return "named" if together else "uncorrected" if alone else None


def peak_of(serve: Serve) -> str | None:
    """serve.peak_at's variant: "at" (the peak's tokens per second decided above the smallest
    batch's), "first" (the smallest batch the peak, every other decided below it or the same),
    "undecided"; None with one batch."""
    first = serve.batches[0]
    if len(serve.batches) < 2:
        return None
    if serve.peak_batch != first.batch:
        return "at" if ratio_decision(serve.peak_gain_interval()) == "above" else "undecided"
    others = [ratio_decision(tokens_ratio(row, first)) for row in serve.batches[1:]]
    return "first" if all(found in ("below", "same") for found in others) else "undecided"


def per_user_of(serve: Serve) -> str | None:
    """serve.per_user_falls's variant: each user's speed at the peak against the smallest
    batch's, "falls" (the step decided longer), "rises", "same" or "undecided"; None where the
    peak is the smallest batch."""
    if serve.peak_batch == serve.batches[0].batch:
        return None
    found = ratio_decision(serve.per_user_interval())
    return {"above": "falls", "below": "rises", "same": "same"}.get(found, "undecided")


def fitted_rows(serve: Serve) -> list[BatchStep]:
    low, high = serve.fit.fitted_batches
    return [row for row in serve.batches if low <= row.batch <= high]


def fit_within(serve: Serve) -> bool:
    """serve.fit_within: the fit holds and every batch of its range lies within holds_within of
    the line at both ends of its passes' interval (decided, at least least_batches batches)."""
    fit = serve.fit
    rows = fitted_rows(serve)
    if not fit.holds or len(rows) < fit.least_batches:
        return False
    for row in rows:
        line = fit.fixed_s + fit.per_sequence_s * row.batch
        interval = row.decode_step_interval
        ends = (interval.low, interval.high)
        if not interval.decisive or any(abs(line - end) / end > fit.holds_within for end in ends):
            return False
    return True


def off_line(fit: ServeFit, batch: int, ends: tuple[float, float]) -> bool:
    """Whether every end lies farther than the fit's tolerance from its line at ``batch``."""
    line = fit.fixed_s + fit.per_sequence_s * batch
    return all(abs(line - end) / end > fit.holds_within for end in ends)


def missed_target(serve: Serve) -> list[str]:
    """Each batch's decode step against the per-user target: "above", "below", "undecided"."""
    target = serve.users.step_target_s
    return [against(row.decode_step_interval, target) for row in serve.batches]


def bound_of(serve: Serve) -> str:
    """serve.bound's variant: "memory" (fewer users by memory than by speed), "speed" (some
    batch's step decided over the target, no more users by speed than by memory), "none" (every
    batch decided within it), or "undecided"."""
    users = serve.users
    memory = users.users_by_memory
    found = missed_target(serve)
    if memory is not None and memory < users.users_by_speed:
        return "memory"
    if "above" in found and (memory is None or users.users_by_speed <= memory):
        return "speed"
    if all(f == "below" for f in found):
        return "none"
    return "undecided"


def speed_bound_of(serve: Serve) -> str | None:
    """serve.speed_bound's variant, where speed binds between two measured batches: "firm" (the
    one within the target and the next over it, both decided, the bound a measured batch),
    "fit" (read off the fit between them), "straddles" (an interval spans the target)."""
    users = serve.users
    if bound_of(serve) != "speed" or not users.speed_between:
        return None
    if users.speed_how == "fit":
        return "fit"
    under, over = (serve.row(batch) for batch in users.speed_between)
    target = users.step_target_s
    firm = against(under.decode_step_interval, target) == "below"
    firm &= against(over.decode_step_interval, target) == "above"
    return "firm" if firm else "straddles"


def nearly_free_of(serve: Serve) -> str | None:
    """serve.nearly_free's variant: "up_to" (every step up to a batch past the smallest decided
    nearly free), "not_free" (the first step up decided costlier), "undecided"; None with one
    batch."""
    steps = free_steps(serve)
    if not steps:
        return None
    if free_up_to(serve) > serve.batches[0].batch:
        return "up_to"
    if steps[0][2] == "costly":
        return "not_free"
    return "undecided"


def dips(serve: Serve, holm: bool = True) -> list[int]:
    """The batches below the peak whose tokens per second the passes decide fell from the
    batch before's: every step up tested (fell or rose), at Holm's levels over them
    (:func:`step_down`), or each at FAMILY_LEVEL (``holm`` False)."""
    steps = serve.steps_up()
    found = step_down(
        lambda i, level: against(tokens_ratio(steps[i][1], steps[i][0], level), 1.0),
        len(steps),
        holm,
    )
    return [
        after.batch
        for (_, after), word in zip(steps, found)
        if word == "below" and after.batch < serve.peak_batch
    ]


def growth_steps(serve: Serve, holm: bool = False) -> list[tuple[int, int, str]]:
    """Each step up: (from, to, "grew" / "flat" / "undecided"): tokens per second grew by
    more than growth_per_doubling per doubling, or not, as the passes decide: each step at
    FAMILY_LEVEL, or (``holm``) at Holm's step-down levels over all the steps
    (:func:`step_down`; serve.growth's "mixed")."""
    steps = serve.steps_up()
    found = step_down(
        lambda i, level: grew(*steps[i], serve.growth_per_doubling, level), len(steps), holm
    )
    return [(before.batch, after.batch, word) for (before, after), word in zip(steps, found)]


def growth_stops_from(serve: Serve) -> int:
    """The smallest batch from which every step up is decided flat (the largest batch where
    the last one is not)."""
    stops = serve.batches[-1].batch
    for before, _, found in reversed(growth_steps(serve)):
        if found != "flat":
            break
        stops = before
    return stops


def free_steps(serve: Serve) -> list[tuple[int, int, str]]:
    """Each step up: (from, to, "free" / "costly" / "undecided"): the decode step grew by at
    most nearly_free, or more, as the passes decide."""
    steps = []
    for before, after in itertools.pairwise(serve.batches):
        ratio = ratio_interval(after.pass_step_s, before.pass_step_s)
        found = against(ratio, 1 + serve.nearly_free)
        steps.append(
            (
                before.batch,
                after.batch,
                {"below": "free", "above": "costly"}.get(found, "undecided"),
            )
        )
    return steps


def faster_tests(serve: Serve) -> list[tuple[int, list[float], list[float]]]:
    """larger_faster's tests: per step up, (the larger batch, its passes' decode steps, the
    smaller's), and the same of their prefills where both clocked them."""
    tests = []
    for before, after in serve.steps_up():
        tests.append((after.batch, after.pass_step_s, before.pass_step_s))
        if after.prefills_s and before.prefills_s:
            tests.append((after.batch, after.prefills_s, before.prefills_s))
    return tests


def faster_batches(serve: Serve, holm: bool = True) -> list[int]:
    """The batches whose decode step (or prefill) the passes decide faster than the next
    smaller batch's (more work done faster contradicts physics: a measuring problem): every
    test of faster_tests (faster or slower), at Holm's levels over them, or each at
    FAMILY_LEVEL (``holm`` False)."""
    tests = faster_tests(serve)
    found = step_down(
        lambda i, level: against(ratio_interval(*tests[i][1:], level), 1.0), len(tests), holm
    )
    named = {batch for (batch, _, _), word in zip(tests, found) if word == "below"}
    return sorted(named)


def off_the_line(serve: Serve) -> list[int]:
    """The batches past the fitted range whose decode step lies off the fit's line by more
    than its own tolerance: both ends of the passes' interval farther than ``holds_within``
    (relative) from the line; a batch its tolerance accepts at an end is not among them."""
    fit = serve.fit
    off = []
    for row in serve.batches:
        if row.batch <= fit.fitted_batches[1]:
            continue
        interval = row.decode_step_interval
        if interval.decisive and off_line(fit, row.batch, (interval.low, interval.high)):
            off.append(row.batch)
    return off


def decided_cliffs(serve: Serve, holm: bool = True) -> list[Cliff]:
    """The cliffs whose decode step grew faster than the batch in every pass's terms: the
    per-pass step ratio's interval above the batch ratio, every step up tested (above or
    below it) at Holm's levels over them, or each at FAMILY_LEVEL (``holm`` False)."""
    steps = serve.steps_up()

    def decide(index: int, level: float) -> str:
        before, after = steps[index]
        ratio = ratio_interval(after.pass_step_s, before.pass_step_s, level)
        return against(ratio, after.batch / before.batch)

    found = step_down(decide, len(steps), holm)
    above = {after.batch for (_, after), word in zip(steps, found) if word == "above"}
    return [cliff for cliff in serve.cliffs if cliff.to_batch in above]


def banded(serve: Serve) -> list[dict]:
    """The batches whose decode steps (every pass's) part into two bands whose intervals
    separate (records.decided_bands): each batch and its bands."""
    found = []
    for row in serve.batches:
        parts = decided_bands(row.decode_steps_s)
        if parts is not None:
            found.append({"batch": row.batch, "bands": parts})
    return found


def spread_over(serve: Serve, doubt: str) -> list[int]:
    """The batches whose recorded spread (``doubt``) passed its threshold."""
    return [row.batch for row in serve.batches if doubt in row.doubts]


def free_up_to(serve: Serve) -> int:
    """The largest batch reached while every step up was decided nearly free."""
    reached = serve.batches[0].batch
    for _, after, found in free_steps(serve):
        if found != "free":
            break
        reached = after
    return reached


def spread_named(serve: Serve, doubt: str) -> bool:
    """serve.<spread>_over: some batch's recorded spread (``doubt``) passed its threshold."""
    return bool(spread_over(serve, doubt))


def two_bands(serve: Serve) -> bool:
    """serve.two_bands: some batch's decode steps part into two bands (:func:`banded`)."""
    return bool(banded(serve))


def context_beyond_measured(serve: Serve) -> bool:
    """serve.context_beyond_measured: the users' context is longer than the caches clocked."""
    return serve.users.context > serve.decode_context


def dips_named(serve: Serve) -> str | None:
    """serve.dips: :func:`named_of` the dips at Holm's levels and alone."""
    return named_of(dips(serve), dips(serve, holm=False))


def larger_faster(serve: Serve) -> str | None:
    """serve.larger_faster: :func:`named_of` the batches faster than the next smaller one."""
    return named_of(faster_batches(serve), faster_batches(serve, holm=False))


def cliffs_named(serve: Serve) -> str | None:
    """serve.cliffs: :func:`named_of` the decided cliffs at Holm's levels and alone."""
    return named_of(decided_cliffs(serve), decided_cliffs(serve, holm=False))


def off_the_line_named(serve: Serve) -> bool:
    """serve.off_the_line: the fit holds and some batch past its range lies off its line."""
    return serve.fit.holds and bool(off_the_line(serve))


def capacity_bound(serve: Serve | None) -> str:
    """capacity.bound: which bound serve.json found first: "memory" (the formula's count decides
    the users per card), "speed" (:func:`bound_of`'s: a batch's decode step decided over the
    target, and no more users by speed than by memory), "undecided" (serve's passes cannot say
    whether a batch missed the target), or "unmeasured" (neither, or no serve.json: the cards'
    speed was not measured)."""
    users = serve.users if serve is not None else None
    memory_first = (
        users is not None
        and users.users_by_memory is not None
        and users.users_by_memory < users.users_by_speed
    )
    if memory_first:
        return "memory"
    if serve is None:
        return "unmeasured"
    return {"speed": "speed", "undecided": "undecided"}.get(bound_of(serve), "unmeasured")
