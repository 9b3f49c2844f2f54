"""serve.json: decode steps against the batch size, and the users one machine serves.

Its record and the facts its report section reads.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass

from mminfer.records import RunInfo, decided_bands, spread, two_bands_in
from mminfer.records.interval import (
    FAMILY_LEVEL,
    SAME_WITHIN,
    Interval,
    against,
    median_interval,
    ratio_decision,
    ratio_interval,
)
from mminfer.records.machine import CacheLevel, Contention


@dataclass
class BatchStep:
    """One batch size: the task prompt decoded ``batch`` times together, with the cache.

    Clocked in every pass of serve.passes (the passes interleaved across the batch sizes): the
    spread is over the passes, and the verdict is the time job's rule
    (mminfer.records.spread.verdict_of).
    """

    batch: int
    prefill_s: float | None  # batch x prompt tokens at once (median of the passes); None past
    # serve.prefill_up_to
    decode_step_s: float  # the median of the passes' medians (decode_step_interval's median)
    decode_steps_s: list[float]  # every decode step, pass after pass
    prefills_s: list[float] | None  # each pass's prefill
    pass_step_s: list[float]  # each pass's median decode step: the raw runs, paired by pass
    decode_step_interval: Interval  # the passes' median steps: median and interval (one look at
    # FAMILY_LEVEL, mminfer.records.interval)
    prefill_interval: Interval | None  # the passes' prefills; None past serve.prefill_up_to
    step_low_s: float  # the fastest pass's median step
    step_high_s: float  # the slowest pass's median step
    cv_decode_step: float  # coefficient of variation of the passes' median steps
    cv_within_passes: float  # the steps' spread within a pass around their trend (median)
    cv_prefill: float | None  # of the passes' prefills
    # see mminfer.measures.serve.measure.batch_doubts: each spread (of the passes, of the steps
    # within them around
    # their trend) judged against Serve.step_noisy_cv
    doubts: list[str]
    verdict: str  # "ok", "noisy" or "untrusted"
    tokens_per_second: float  # batch / decode_step_s: the machine's
    per_user_tokens_per_second: float  # 1 / decode_step_s: each user's
    kv_bytes: int  # measured: the byte sum of the batch's cache
    # the formula: 2 x layers x batch x (prompt + decode steps) x KV heads x head_dim x bytes
    formula_kv_bytes: int
    kv_bytes_match: bool
    experts_touched: float | None  # MoE: distinct experts per layer in a decode step (median)


@dataclass
class ServeFit:
    """The decode step against the batch: step(B) = fixed + per_sequence x B.

    Fitted in relative error (every batch counts alike, not only the slowest) over the batches
    from the smallest up to the largest where the line holds (``fitted_batches``).
    """

    model: str
    method: str
    fixed_s: float
    per_sequence_s: float
    held_at_zero: list[str]
    median_relative_residual: float  # over fitted_batches
    holds: bool  # every batch of fitted_batches within holds_within, and least_batches
    holds_within: float  # the relative error every batch of a range must keep (serve.HOLDS_WITHIN)
    least_batches: int  # batches a range needs to claim the line holds (two fit any line)
    measured_batches: list[int]  # the smallest and largest
    fitted_batches: list[int]  # the smallest and largest of the range the fit claims
    relative_residuals: list[float]  # |fit - measured| / measured at every measured batch
    crossover_batch: float | None  # fixed / per_sequence: past it, the batch's own work dominates


@dataclass
class Cliff:
    """Two consecutive batch sizes between which the decode step grew faster than the batch.

    Beside it, the memory a decode step reads: every weight once, and the batch's KV cache as
    stored; and the device's caches whose size lies between the step's memory at the two batches:
    where one does, the step's memory outgrew that cache, the likely cause; where none does, this
    comparison names no cause. The KV cache as attention sees it after repeat_kv is context only.
    """

    from_batch: int
    to_batch: int
    batch_ratio: float
    step_ratio: float  # the larger batch's decode step / the smaller one's
    weight_bytes: int  # every parameter in memory, read once a step
    kv_bytes_before: int
    kv_bytes_after: int
    attention_kv_bytes_before: int  # after repeat_kv: x heads / KV heads (context, decides nothing)
    attention_kv_bytes_after: int
    step_bytes_before: int  # weight_bytes + kv_bytes_before
    step_bytes_after: int
    crossed: list[CacheLevel]  # whose size lies between step_bytes_before and step_bytes_after
    # "cache" (a level lies between), "spread" (either batch's verdict is not ok: the cliff may be
    # the machine's noise; no cause named) or "unknown" (no level lies between)
    likely_cause: str


@dataclass
class UsersBound:
    """How many users this device takes at a per-user decode speed and context."""

    tokens_per_second: float  # each user's target
    step_target_s: float  # 1 / tokens_per_second
    context: int
    users_by_speed: int
    speed_how: str  # "measured", "fit", "lower bound" or "too slow" (see serve.users_by_speed)
    speed_between: list[int] | None  # the measured batches either side of the target
    kv_bytes_per_token: int
    free_bytes: int | None  # of this device, now (the weights are loaded)
    free_source: str
    users_by_memory: int | None
    memory_formula: str
    binding: str  # "speed", "memory", or "not reached" (the speed held at every measured batch)


@dataclass
class Serve:
    """serve.json: decode steps against the batch size, and the users one machine serves."""

    prompt_len: int
    decode_steps: int
    warmup: int
    prefill_up_to: int  # batches up to this size also clock their prefill
    decode_context: int  # the tokens in each user's cache by the last decode step clocked
    context_asked: int  # serve.context; users.context is it, capped at the model's positions
    batches_planned: list[int]
    memory_cap_gib: float
    left_out_by_cap: list[int]  # batches whose cache would pass serve.memory_cap_gib
    threads: int
    load_before: list[float] | None
    load_after: list[float] | None
    passes: int  # every batch clocked once per pass
    order: str
    noisy_cv: float  # the threshold of the passes' spread
    step_noisy_cv: float  # the threshold of the steps' spread within a pass (spread.STEP_NOISY_CV)
    clock: str  # the clock the runs were read by: "perf_counter", or the tests' jitter
    doubts: list[str]  # every batch's doubts together
    verdict: str  # the table's: "ok", "noisy" or "untrusted" (mminfer.records.spread.verdict_of)
    batches: list[BatchStep]
    fit: ServeFit
    nearly_free: float
    nearly_free_up_to: int  # the largest batch reached while each doubling stayed nearly free
    peak_batch: int  # the batch with the most tokens per second
    peak_tokens_per_second: float
    peak_gain: float  # peak tokens per second / the smallest batch's
    growth_per_doubling: float  # serve.growth_per_doubling
    growth_stops_at: int  # from this batch on, no doubling raised tokens per second by that much
    growth_stops_within: bool  # False: it still grew so at the largest batch measured
    growth_stops_step_s: float  # the decode step at growth_stops_at
    cliffs: list[Cliff]
    caches: list[CacheLevel]
    caches_source: str
    users: UsersBound
    contention: Contention | None  # during the timed passes (mminfer.records.machine)
    run: RunInfo

    # The sentences' figures, from the passes (paired: every pass visits every batch).

    def row(self, batch: int) -> BatchStep:
        return next(row for row in self.batches if row.batch == batch)

    def peak_gain_interval(self) -> Interval:
        """Tokens per second at the peak over the smallest batch's, pass by pass."""
        return tokens_ratio(self.row(self.peak_batch), self.batches[0])

    def per_user_interval(self) -> Interval:
        """The decode step at the peak over the smallest batch's, pass by pass: above 1, each
        user is slower at the peak."""
        return ratio_interval(self.row(self.peak_batch).pass_step_s, self.batches[0].pass_step_s)

    def steps_up(self) -> list[tuple[BatchStep, BatchStep]]:
        """Each batch beside the next larger: every step up the sentences test together."""
        return list(itertools.pairwise(self.batches))

    def dips(self, holm: bool = True) -> list[int]:
        """The batches below the peak whose tokens per second the passes decide fell from the
        batch before's: every step up tested (fell or rose), at Holm's levels over them
        (:func:`step_down`), or each at FAMILY_LEVEL (``holm`` False)."""
        steps = self.steps_up()
        found = step_down(
            lambda i, level: against(tokens_ratio(steps[i][1], steps[i][0], level), 1.0),
            len(steps),
            holm,
        )
        return [
            after.batch
            for (_, after), word in zip(steps, found)
            if word == "below" and after.batch < self.peak_batch
        ]

    def growth_steps(self, holm: bool = False) -> list[tuple[int, int, str]]:
        """Each step up: (from, to, "grew" / "flat" / "undecided"): tokens per second grew by
        more than growth_per_doubling per doubling, or not, as the passes decide: each step at
        FAMILY_LEVEL, or (``holm``) at Holm's step-down levels over all the steps
        (:func:`step_down`; serve.growth's "mixed")."""
        steps = self.steps_up()
        found = step_down(
            lambda i, level: grew(*steps[i], self.growth_per_doubling, level), len(steps), holm
        )
        return [(before.batch, after.batch, word) for (before, after), word in zip(steps, found)]

    def growth_stops_from(self) -> int:
        """The smallest batch from which every step up is decided flat (the largest batch where
        the last one is not)."""
        stops = self.batches[-1].batch
        for before, _, found in reversed(self.growth_steps()):
            if found != "flat":
                break
            stops = before
        return stops

    def free_steps(self) -> list[tuple[int, int, str]]:
        """Each step up: (from, to, "free" / "costly" / "undecided"): the decode step grew by at
        most nearly_free, or more, as the passes decide."""
        steps = []
        for before, after in itertools.pairwise(self.batches):
            ratio = ratio_interval(after.pass_step_s, before.pass_step_s)
            found = against(ratio, 1 + self.nearly_free)
            steps.append(
                (
                    before.batch,
                    after.batch,
                    {"below": "free", "above": "costly"}.get(found, "undecided"),
                )
            )
        return steps

    def faster_tests(self) -> list[tuple[int, list[float], list[float]]]:
        """larger_faster's tests: per step up, (the larger batch, its passes' decode steps, the
        smaller's), and the same of their prefills where both clocked them."""
        tests = []
        for before, after in self.steps_up():
            tests.append((after.batch, after.pass_step_s, before.pass_step_s))
            if after.prefills_s and before.prefills_s:
                tests.append((after.batch, after.prefills_s, before.prefills_s))
        return tests

    def faster_batches(self, holm: bool = True) -> list[int]:
        """The batches whose decode step (or prefill) the passes decide faster than the next
        smaller batch's (more work done faster contradicts physics: a measuring problem): every
        test of faster_tests (faster or slower), at Holm's levels over them, or each at
        FAMILY_LEVEL (``holm`` False)."""
        tests = self.faster_tests()
        found = step_down(
            lambda i, level: against(ratio_interval(*tests[i][1:], level), 1.0), len(tests), holm
        )
        named = {batch for (batch, _, _), word in zip(tests, found) if word == "below"}
        return sorted(named)

    def off_the_line(self) -> list[int]:
        """The batches past the fitted range whose decode step lies off the fit's line by more
        than its own tolerance: both ends of the passes' interval farther than ``holds_within``
        (relative) from the line; a batch its tolerance accepts at an end is not among them."""
        fit = self.fit
        off = []
        for row in self.batches:
            if row.batch <= fit.fitted_batches[1]:
                continue
            interval = row.decode_step_interval
            if interval.decisive and off_line(fit, row.batch, (interval.low, interval.high)):
                off.append(row.batch)
        return off

    def decided_cliffs(self, holm: bool = True) -> list[Cliff]:
        """The cliffs whose decode step grew faster than the batch in every pass's terms: the
        per-pass step ratio's interval above the batch ratio, every step up tested (above or
        below it) at Holm's levels over them, or each at FAMILY_LEVEL (``holm`` False)."""
        steps = self.steps_up()

        def decide(index: int, level: float) -> str:
            before, after = steps[index]
            ratio = ratio_interval(after.pass_step_s, before.pass_step_s, level)
            return against(ratio, after.batch / before.batch)

        found = step_down(decide, len(steps), holm)
        above = {after.batch for (_, after), word in zip(steps, found) if word == "above"}
        return [cliff for cliff in self.cliffs if cliff.to_batch in above]

    def cliff_interval(self, cliff: Cliff) -> Interval:
        """A cliff's decode step after over before, pass by pass."""
        return ratio_interval(
            self.row(cliff.to_batch).pass_step_s, self.row(cliff.from_batch).pass_step_s
        )

    def banded(self) -> list[dict]:
        """The batches whose decode steps (every pass's) part into two bands whose intervals
        separate (records.decided_bands): each batch and its bands."""
        found = []
        for row in self.batches:
            parts = decided_bands(row.decode_steps_s)
            if parts is not None:
                found.append({"batch": row.batch, "bands": parts})
        return found

    def spread_over(self, doubt: str) -> list[int]:
        """The batches whose recorded spread (``doubt``) passed its threshold."""
        return [row.batch for row in self.batches if doubt in row.doubts]

    def free_up_to(self) -> int:
        """The largest batch reached while every step up was decided nearly free."""
        reached = self.batches[0].batch
        for _, after, found in self.free_steps():
            if found != "free":
                break
            reached = after
        return reached


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


def cliff_about(cliff: Cliff) -> dict:
    """serve.cliff_cache's figures in the tally: the cliff's batches and the levels it names."""
    return {
        "from_batch": cliff.from_batch,
        "to_batch": cliff.to_batch,
        "levels": [level.name for level in cliff.crossed],
    }


def experts_of(serve: Serve) -> str | None:
    """serve.experts: a MoE model's experts a decode step touches (routing counts, not times:
    exact), at the largest batch against the smallest, "grow" or the "same"; None where a batch
    has no count or they fell."""
    experts = [row.experts_touched for row in serve.batches]
    if not experts or None in experts or experts[-1] < experts[0]:
        return None
    return "grow" if experts[-1] > experts[0] else "same"


def experts_in_counts(serve: Serve, chosen: str) -> bool:
    """serve.experts's check: the experts a step touched at the largest batch against the
    smallest, the two figures the sentence prints: above ("grow") or equal ("same")."""
    batches = sorted(serve.batches, key=lambda row: row.batch)
    first, last = batches[0].experts_touched, batches[-1].experts_touched
    return {"grow": last > first, "same": last == first}[chosen]


def two_bands_supported(serve: Serve) -> bool:
    """serve.two_bands's check: each named batch's decode steps, every pass's, part into two
    groups whose intervals separate (records.two_bands_in)."""
    named = [item["batch"] for item in serve.banded()]
    return bool(named) and all(two_bands_in(serve.row(batch).decode_steps_s) for batch in named)


CLOSE = 1e-9  # a recorded spread, recomputed: equal but for rounding


def pass_steps(row: BatchStep, passes: int) -> list[list[float]]:
    """A batch's decode steps, pass by pass."""
    size = len(row.decode_steps_s) // passes
    return [row.decode_steps_s[index * size : (index + 1) * size] for index in range(passes)]


def spread_supported(serve: Serve, doubt: str) -> bool:
    """The spread sentences' check: each named batch's spread recomputed from its raw passes
    (the passes' median steps, their prefills, or the steps within each pass around their
    trend) over its threshold, and one batch named at least."""
    named = serve.spread_over(doubt)
    for batch in named:
        row = serve.row(batch)
        if doubt == "decode_spread_within_passes":
            found, limit = spread.cv_within_runs(pass_steps(row, serve.passes)), serve.step_noisy_cv
        else:
            values = row.pass_step_s if doubt == "decode_spread" else row.prefills_s or []
            found, limit = spread.coefficient_of_variation(values), serve.noisy_cv
        if found <= limit - CLOSE:
            return False
    return bool(named)


# --- the sentences: the predicates read the passes through the record's figures, each check
# recomputes the same comparison from the passes' raw medians (pass_step_s) on its own ------


def tokens_ratio(after: BatchStep, before: BatchStep, level: float = FAMILY_LEVEL) -> Interval:
    """Tokens per second at ``after`` over ``before``, pass by pass (one look at FAMILY_LEVEL)."""
    rates_after = [after.batch / step for step in after.pass_step_s]
    rates_before = [before.batch / step for step in before.pass_step_s]
    return ratio_interval(rates_after, rates_before, level)


def grew(before: BatchStep, after: BatchStep, growth: float, level: float = FAMILY_LEVEL) -> str:
    """ "grew" (tokens per second up by more than ``growth`` per doubling), "flat" or
    "undecided", from the passes' paired ratio at ``level``."""
    doublings = math.log2(after.batch / before.batch)
    found = against(tokens_ratio(after, before, level), (1 + growth) ** doublings)
    return {"above": "grew", "below": "flat"}.get(found, "undecided")


def passes_of(serve: Serve) -> dict[int, list[float]]:
    """The checks' raw runs: each batch's passes' median steps."""
    return {row.batch: list(row.pass_step_s) for row in serve.batches}


def decided(values: list[float]) -> tuple[float, float] | None:
    """The checks' own interval: [min, max] of the values where it covers FAMILY_LEVEL or more
    (five passes and up), a narrower order-statistic one where more values allow; None where too
    few values decide anything."""
    interval = median_interval(values, FAMILY_LEVEL)
    if not interval.decisive:
        return None
    return interval.low, interval.high


def per_pass(serve: Serve, top: int, bottom: int, rates: bool) -> tuple[float, float] | None:
    """The checks' paired ratio ``top`` over ``bottom``: of tokens per second (``rates``) or of
    the decode step, pass by pass, decided or None."""
    steps = passes_of(serve)
    if rates:
        values = [(top / a) / (bottom / b) for a, b in zip(steps[top], steps[bottom])]
    else:
        values = [a / b for a, b in zip(steps[top], steps[bottom])]
    return decided(values)


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
    steps = [found for _, _, found in serve.growth_steps()]
    if not steps:
        return None
    if all(found == "grew" for found in steps):
        return "every"
    if serve.growth_stops_from() < serve.batches[-1].batch:
        return "stops"
    if all(found != "undecided" for _, _, found in serve.growth_steps(holm=True)):
        return "mixed"
    return "uncorrected" if "undecided" not in steps else "undecided"


def sign_miss(values: list[float], bar: float, above: bool) -> float:
    """The chance that the order-statistic interval first lying wholly above (below) ``bar``
    misses the median: 2 P(Binomial(n, 1/2) <= n - the values beyond ``bar``)."""
    n = len(values)
    beyond = sum(value > bar if above else value < bar for value in values)
    return 2 * sum(math.comb(n, i) for i in range(n - beyond + 1)) / 2**n


ALONE = 1 - FAMILY_LEVEL + 1e-12  # the miss a test decided on its own may have


def sign_word(values: list[float], bar: float, words: tuple[str, str]) -> tuple[float, str]:
    """The checks' two-sided sign test of ``values`` against ``bar``: the smaller miss and its
    word, ``words[0]`` above the bar or ``words[1]`` below it."""
    return min((sign_miss(values, bar, True), words[0]), (sign_miss(values, bar, False), words[1]))


def holm_of(misses: list[tuple[float, str]]) -> list[str]:
    """The checks' Holm step-down over the tests' (miss, word): the smallest miss decided at
    10 % / L, the next at 10 % / (L - 1), ..., until one is not; the rest "undecided"."""
    found = ["undecided"] * len(misses)
    for rank, index in enumerate(sorted(range(len(misses)), key=lambda i: misses[i][0])):
        if misses[index][0] > (1 - FAMILY_LEVEL) / (len(misses) - rank) + 1e-12:
            break
        found[index] = misses[index][1]
    return found


def named_of(together: list, alone: list) -> str | None:
    """dips', cliffs' and larger_faster's variant: "named" (some batch decided at Holm's levels
    over every test), "uncorrected" (none, but one decided alone at 90 %), else None."""
    return "named" if together else "uncorrected" if alone else None


def named_supported(named: list[int], found: list[tuple[int, float, str]], chosen: str) -> bool:
    """The named sentences' check from the tests recomputed (``found``: each test's batch, miss
    and word, only the word naming a batch kept): "named": every batch named decided at Holm's
    levels over all the tests; "uncorrected": none so, one alone at 90 %."""
    holm = holm_of([(miss, word) for _, miss, word in found])
    together = {batch for (batch, _, word), held in zip(found, holm) if word == held == "named"}
    alone = {batch for batch, miss, word in found if word == "named" and miss <= ALONE}
    if chosen == "named":
        return bool(named) and set(named) <= together
    return not together and bool(alone)


def growth_supported(serve: Serve, chosen: str) -> bool:
    """serve.growth's check: each step up's tokens-per-second ratio from the raw passes, its
    sign test's miss against the bar; each step at 10 %, and Holm's step-down over the steps
    (the smallest miss at 10 % / L, the next at 10 % / (L - 1), ...) for "mixed"."""
    batches = [row.batch for row in serve.batches]
    steps = passes_of(serve)
    misses = []
    for a, b in itertools.pairwise(batches):
        bar = (1 + serve.growth_per_doubling) ** math.log2(b / a)
        ratios = [(b / x) / (a / y) for x, y in zip(steps[b], steps[a])]
        misses.append(sign_word(ratios, bar, ("grew", "flat")))
    found = [word if miss <= ALONE else "undecided" for miss, word in misses]
    holm = holm_of(misses)
    if chosen == "every":
        return all(f == "grew" for f in found)
    if chosen == "stops":
        start = batches.index(serve.growth_stops_from())
        return start < len(found) and all(f == "flat" for f in found[start:])
    if chosen == "mixed":
        return "undecided" not in holm and "grew" in holm and "flat" in holm
    if chosen == "uncorrected":
        return "undecided" not in found and "undecided" in holm
    return "undecided" in found


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


def peak_supported(serve: Serve, chosen: str) -> bool:
    """serve.peak_at's check, from the raw passes."""
    first = serve.batches[0].batch
    if chosen == "at":
        ratio = per_pass(serve, serve.peak_batch, first, rates=True)
        return ratio is not None and ratio[0] > 1
    if chosen == "first":
        for row in serve.batches[1:]:
            ratio = per_pass(serve, row.batch, first, rates=True)
            if ratio is None or ratio[1] > 1 + SAME_WITHIN:
                return False
        return serve.peak_batch == first
    return chosen == "undecided"


def dips_supported(serve: Serve, chosen: str) -> bool:
    """serve.dips's check: every step up's tokens-per-second ratio from the raw passes, its sign
    test against 1 (fell or rose), a fall named only below the peak (named_supported)."""
    batches = [row.batch for row in serve.batches]
    steps = passes_of(serve)
    found = []
    for a, b in itertools.pairwise(batches):
        ratios = [(b / x) / (a / y) for x, y in zip(steps[b], steps[a])]
        miss, word = sign_word(ratios, 1.0, ("rose", "named"))
        found.append((b, miss, word if b < serve.peak_batch else "rose"))
    return named_supported(serve.dips(), found, chosen)


def per_user_of(serve: Serve) -> str | None:
    """serve.per_user_falls's variant: each user's speed at the peak against the smallest
    batch's, "falls" (the step decided longer), "rises", "same" or "undecided"; None where the
    peak is the smallest batch."""
    if serve.peak_batch == serve.batches[0].batch:
        return None
    found = ratio_decision(serve.per_user_interval())
    return {"above": "falls", "below": "rises", "same": "same"}.get(found, "undecided")


def per_user_supported(serve: Serve, chosen: str) -> bool:
    """serve.per_user_falls's check, from the raw passes."""
    ratio = per_pass(serve, serve.peak_batch, serve.batches[0].batch, rates=False)
    if ratio is None:
        return chosen == "undecided"
    low, high = ratio
    if chosen == "falls":
        return low > 1
    if chosen == "rises":
        return high < 1
    if chosen == "same":
        return low >= 1 / (1 + SAME_WITHIN) and high <= 1 + SAME_WITHIN
    return True  # the words only say the passes cannot tell


def larger_faster_supported(serve: Serve, chosen: str) -> bool:
    """serve.larger_faster's check: every step up's decode steps, and prefills where both
    batches clocked them, pass by pass against the next smaller batch's, their sign tests
    against 1 (faster or slower) recomputed (named_supported)."""
    found = []
    for before, after in itertools.pairwise(serve.batches):
        pairs = [(after.pass_step_s, before.pass_step_s), (after.prefills_s, before.prefills_s)]
        for top, bottom in pairs:
            if top and bottom:
                miss, word = sign_word(
                    [a / b for a, b in zip(top, bottom)], 1.0, ("slower", "named")
                )
                found.append((after.batch, miss, word))
    return named_supported(serve.faster_batches(), found, chosen)


def cliffs_supported(serve: Serve, chosen: str) -> bool:
    """serve.cliffs's check: every step up's per-pass step ratio, recomputed, its sign test
    against the batch ratio (above or below); only a recorded cliff named (named_supported)."""
    steps = passes_of(serve)
    recorded = {(cliff.from_batch, cliff.to_batch) for cliff in serve.cliffs}
    found = []
    for a, b in itertools.pairwise(steps):
        miss, word = sign_word([x / y for x, y in zip(steps[b], steps[a])], b / a, ("named", "no"))
        found.append((b, miss, word if (a, b) in recorded else "no"))
    return named_supported([cliff.to_batch for cliff in serve.decided_cliffs()], found, chosen)


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


def fit_within_supported(serve: Serve) -> bool:
    """serve.fit_within's check: each fitted batch's passes, recomputed, within the bound."""
    fit = serve.fit
    rows = fitted_rows(serve)
    for row in rows:
        line = fit.fixed_s + fit.per_sequence_s * row.batch
        span = decided(row.pass_step_s)
        if span is None or max(abs(line - end) / end for end in span) > fit.holds_within:
            return False
    return fit.holds and len(rows) >= fit.least_batches


def off_line(fit: ServeFit, batch: int, ends: tuple[float, float]) -> bool:
    """Whether every end lies farther than the fit's tolerance from its line at ``batch``."""
    line = fit.fixed_s + fit.per_sequence_s * batch
    return all(abs(line - end) / end > fit.holds_within for end in ends)


def off_the_line_supported(serve: Serve) -> bool:
    """serve.off_the_line's check: the batches past the fitted range recomputed from their
    passes (:func:`decided`), each held to the same tolerance, are the batches named."""
    fit = serve.fit
    found = []
    for row in serve.batches:
        span = decided(row.pass_step_s)
        if (
            row.batch > fit.fitted_batches[1]
            and span is not None
            and off_line(fit, row.batch, span)
        ):
            found.append(row.batch)
    return fit.holds and bool(found) and found == serve.off_the_line()


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


def bound_supported(serve: Serve, chosen: str) -> bool:
    """serve.bound's check: the passes of every batch against the target, recomputed."""
    users = serve.users
    target = users.step_target_s
    spans = [decided(row.pass_step_s) for row in serve.batches]
    over = any(span is not None and span[0] > target for span in spans)
    under = all(span is not None and span[1] < target for span in spans)
    memory = users.users_by_memory
    if chosen == "memory":
        return memory is not None and memory < users.users_by_speed
    if chosen == "speed":
        return over and (memory is None or users.users_by_speed <= memory)
    if chosen == "none":
        return under
    return not under


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


def speed_bound_supported(serve: Serve, chosen: str) -> bool:
    """serve.speed_bound's check: the two batches' passes against the target, recomputed."""
    between = serve.users.speed_between or []
    if chosen == "fit":
        return serve.users.speed_how == "fit"
    if len(between) != 2:
        return False
    target = serve.users.step_target_s
    under = decided(serve.row(between[0]).pass_step_s)
    over = decided(serve.row(between[1]).pass_step_s)
    firm = under is not None and over is not None and under[1] < target < over[0]
    return firm == (chosen == "firm")


def nearly_free_of(serve: Serve) -> str | None:
    """serve.nearly_free's variant: "up_to" (every step up to a batch past the smallest decided
    nearly free), "not_free" (the first step up decided costlier), "undecided"; None with one
    batch."""
    steps = serve.free_steps()
    if not steps:
        return None
    if serve.free_up_to() > serve.batches[0].batch:
        return "up_to"
    if steps[0][2] == "costly":
        return "not_free"
    return "undecided"


def nearly_free_supported(serve: Serve, chosen: str) -> bool:
    """serve.nearly_free's check: the steps' ratios up to the batch named, from the raw
    passes."""
    batches = [row.batch for row in serve.batches]
    bar = 1 + serve.nearly_free
    if chosen == "up_to":
        end = batches.index(serve.free_up_to())
        pairs = itertools.pairwise(batches[: end + 1])
        spans = [per_pass(serve, b, a, rates=False) for a, b in pairs]
        return end > 0 and all(span is not None and span[1] < bar for span in spans)
    if chosen == "not_free":
        span = per_pass(serve, batches[1], batches[0], rates=False)
        return span is not None and span[0] > bar
    return True  # the words only say the passes cannot tell
