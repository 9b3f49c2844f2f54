"""The oracles of serve.json's sentences: each recomputes its words from the passes' raw medians
(pass_step_s) with sign tests and Holm's step-down of its own, never with
mminfer.measures.serve.decide's intervals, which the sentences call.
``ORACLES[key](records, about)``: tests/oracles.py merges them.
"""

from __future__ import annotations

import itertools
import math

from oracles_sweep import two_bands_in
from oracles_timing import judged_by

from mminfer.measures.serve import decide
from mminfer.measures.serve.serve import BatchStep, Serve
from mminfer.records import spread
from mminfer.records.interval import FAMILY_LEVEL, SAME_WITHIN, median_interval
from mminfer.records.reconcile import reconcile_runs


def experts_in_counts(serve: Serve, chosen: str) -> bool:
    """serve.experts's check: the experts a step touched at the largest batch against the
    smallest, the two figures the sentence prints: above ("grow") or equal ("same")."""
    batches = sorted(serve.batches, key=lambda row: row.batch)
    first, last = batches[0].experts_touched, batches[-1].experts_touched
    return {"grow": last > first, "same": last == first}[chosen]


def two_bands_supported(serve: Serve) -> bool:
    """serve.two_bands's check: each named batch's decode steps, every pass's, part into two
    groups whose intervals separate (records.two_bands_in)."""
    named = [item["batch"] for item in decide.banded(serve)]
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
    named = decide.spread_over(serve, doubt)
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
        start = batches.index(decide.growth_stops_from(serve))
        return start < len(found) and all(f == "flat" for f in found[start:])
    if chosen == "mixed":
        return "undecided" not in holm and "grew" in holm and "flat" in holm
    if chosen == "uncorrected":
        return "undecided" not in found and "undecided" in holm
    return "undecided" in found


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
    return named_supported(decide.dips(serve), found, chosen)


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
    return named_supported(decide.faster_batches(serve), found, chosen)


def cliffs_supported(serve: Serve, chosen: str) -> bool:
    """serve.cliffs's check: every step up's per-pass step ratio, recomputed, its sign test
    against the batch ratio (above or below); only a recorded cliff named (named_supported)."""
    steps = passes_of(serve)
    recorded = {(cliff.from_batch, cliff.to_batch) for cliff in serve.cliffs}
    found = []
    for a, b in itertools.pairwise(steps):
        miss, word = sign_word([x / y for x, y in zip(steps[b], steps[a])], b / a, ("named", "no"))
        found.append((b, miss, word if (a, b) in recorded else "no"))
    return named_supported(
        [cliff.to_batch for cliff in decide.decided_cliffs(serve)], found, chosen
    )


def fit_within_supported(serve: Serve) -> bool:
    """serve.fit_within's check: each fitted batch's passes, recomputed, within the bound."""
    fit = serve.fit
    rows = decide.fitted_rows(serve)
    for row in rows:
        line = fit.fixed_s + fit.per_sequence_s * row.batch
        span = decided(row.pass_step_s)
        if span is None or max(abs(line - end) / end for end in span) > fit.holds_within:
            return False
    return fit.holds and len(rows) >= fit.least_batches


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
            and decide.off_line(fit, row.batch, span)
        ):
            found.append(row.batch)
    return fit.holds and bool(found) and found == decide.off_the_line(serve)


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


def nearly_free_supported(serve: Serve, chosen: str) -> bool:
    """serve.nearly_free's check: the steps' ratios up to the batch named, from the raw
    passes."""
    batches = [row.batch for row in serve.batches]
    bar = 1 + serve.nearly_free
    if chosen == "up_to":
        end = batches.index(decide.free_up_to(serve))
        pairs = itertools.pairwise(batches[: end + 1])
        spans = [per_pass(serve, b, a, rates=False) for a, b in pairs]
        return end > 0 and all(span is not None and span[1] < bar for span in spans)
    if chosen == "not_free":
        span = per_pass(serve, batches[1], batches[0], rates=False)
        return span is not None and span[0] > bar
    return True  # the words only say the passes cannot tell


def prefill_against_sweep_supported(serve: Serve, sweep, chosen: str) -> bool:
    """serve.prefill_against_sweep: serve's passes' prefills and the sweep's runs' first cached
    steps, recomputed and reconciled."""
    first = serve.batches[0]
    if first.prefills_s is None or sweep.prompt_len != serve.prompt_len:
        return False
    ttfts = [run[0] for run in sweep.steps.with_cache_runs_s]
    return reconcile_runs(first.prefills_s, ttfts) == chosen


def users_bound_supported(serve: Serve | None, chosen: str) -> bool:
    """capacity.bound: serve.bound's oracle, from the passes."""
    if serve is None:
        return chosen == "unmeasured"
    if chosen in ("memory", "speed", "undecided"):
        return bound_supported(serve, chosen)
    return bound_supported(serve, "none")


ORACLES = {
    "serve.spread_named": lambda records, about: spread_supported(records["serve"], about["doubt"]),
    "serve.two_bands": judged_by(two_bands_supported, "serve"),
    "serve.experts_of": judged_by(experts_in_counts, "serve"),
    "serve.peak_of": judged_by(peak_supported, "serve"),
    "serve.dips_named": judged_by(dips_supported, "serve"),
    "serve.per_user_of": judged_by(per_user_supported, "serve"),
    "serve.bound_of": judged_by(bound_supported, "serve"),
    "serve.speed_bound_of": judged_by(speed_bound_supported, "serve"),
    "serve.larger_faster": judged_by(larger_faster_supported, "serve"),
    "serve.cliffs_named": judged_by(cliffs_supported, "serve"),
    "serve.fit_within": judged_by(fit_within_supported, "serve"),
    "serve.off_the_line_named": judged_by(off_the_line_supported, "serve"),
    "serve.growth_of": judged_by(growth_supported, "serve"),
    "serve.nearly_free_of": judged_by(nearly_free_supported, "serve"),
    "serve.prefill_against_sweep": judged_by(prefill_against_sweep_supported, "serve", "sweep"),
    "serve.capacity_bound": judged_by(users_bound_supported, "serve"),
}
