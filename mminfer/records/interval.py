"""A timing is an interval: the median of interleaved rounds with the range that covers it.

Every timed figure is the median of independent repetitions (rounds of an A/B timing, runs of a
sweep or a probe). Its interval is distribution-free: the order statistics [x(k), x(n+1-k)] of the
n values cover the true median with probability 1 - 2 P(Binomial(n, 1/2) < k), whatever the
distribution (a busy machine's bimodal runs included). With 3 rounds [min, max] covers 75 %; with
9, [x(2), x(8)] covers 96 %. A paired quantity (a speedup, a share, a penalty's cost) is the
median of its per-round values, each round's two runs taken under the same load, and its interval
is the order-statistic interval of those per-round values. A figure computed from other
intervals' bounds (a ratio of two medians, a sum of terms) is :func:`joined`: it misses at most
as often as its parts together.

A comparison is decided only by an interval whose coverage reaches the level in force
(:func:`look_level`), never by two medians alone:

- ``"same"``: the paired ratio's interval lies within [1 / (1 + SAME_WITHIN), 1 + SAME_WITHIN]
  (overlapping intervals alone prove nothing);
- ``"above"`` / ``"below"``: the interval lies wholly above / below 1 (or the limit);
- ``"undecided"``: anything else, the interval too wide or its coverage below the level.

More rounds while undecided (mminfer.timing.ab) means looking at the data after every round, and a
rule that stops when it first sees a decision errs more often than one look would. It is handled
by Bonferroni: a timing that may look after each of its rounds ``runs`` .. ``max_runs`` decides at
each look only at the per-look level 1 - (1 - FAMILY_LEVEL) / L, L the looks at which that level
can be reached at all, so that over all its looks the chance of a wrong decision is at most
1 - FAMILY_LEVEL (10 %). With time's defaults (3 to 9 rounds) that is 97.5 % per look: a decision
needs at least 7 rounds that all agree. A timing with a fixed number of runs looks once, at
FAMILY_LEVEL.

Pure Python, no torch: the report and the checker (mminfer.report.check) import it.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from dataclasses import dataclass

FAMILY_LEVEL = 0.90  # the chance, over all looks, that a decided comparison is right
SAME_WITHIN = 0.05  # a paired ratio within 5 % of 1 on both ends is "the same" (noise threshold)
DECISIONS = ("above", "below", "same", "undecided")


@dataclass(frozen=True)
class Interval:
    """A median and the order-statistic interval around it; in a result file as an object."""

    median: float
    low: float
    high: float
    coverage: float  # the chance that [low, high] holds the true median (0 for one value)
    level: float  # the coverage a decision needs (look_level); a decision reads both
    runs: int  # the values it was taken from

    @property
    def decisive(self) -> bool:
        """Whether the interval reaches its level: only then may a comparison be read off it."""
        return self.runs > 1 and self.coverage >= self.level - 1e-12

    def scaled(self, factor: float) -> Interval:
        """The same interval in another unit (its median and ends times ``factor``): seconds as
        ms (1000), a share as percent (100)."""
        return dataclasses.replace(
            self, median=self.median * factor, low=self.low * factor, high=self.high * factor
        )


def coverage(n: int, k: int) -> float:
    """The chance that [x(k), x(n+1-k)] of n independent values holds their true median."""
    if n < 2 or not 1 <= k <= n // 2:
        return 0.0
    below = sum(math.comb(n, i) for i in range(k)) / 2**n
    return 1.0 - 2.0 * below


def least_miss(n: int) -> float:
    """The smallest miss probability n values allow: that of [min, max], 2 / 2**n."""
    return 1.0 - coverage(n, 1) if n >= 2 else 1.0


def look_level(runs: int, max_runs: int) -> float:
    """The coverage each look must reach so that all looks together err at most 1 - FAMILY_LEVEL.

    A timing looks after each round from ``runs`` to ``max_runs``; a look can decide only where
    n values can reach the level at all (:func:`least_miss`). The level is the least strict one
    whose count of possible looks L keeps L x (1 - level) within the family's 10 %. A timing that
    can never reach it (``max_runs`` too small) gets FAMILY_LEVEL and decides nothing.
    """
    ns = range(runs, max(runs, max_runs) + 1)
    allowed = 1.0 - FAMILY_LEVEL
    for looks in range(1, len(ns) + 1):
        miss = allowed / looks
        possible = sum(1 for n in ns if least_miss(n) <= miss + 1e-12)
        if 0 < possible <= looks:
            return 1.0 - miss
    return FAMILY_LEVEL


def median_interval(values: list[float], level: float = FAMILY_LEVEL) -> Interval:
    """The median of ``values`` and the narrowest symmetric order-statistic interval covering it
    at ``level`` or more; [min, max] with its lower coverage where n is too small for ``level``."""
    if not values:
        raise ValueError("an interval needs at least one value")
    ordered = sorted(values)
    n = len(ordered)
    k = 1
    while k + 1 <= n // 2 and coverage(n, k + 1) >= level - 1e-12:
        k += 1
    return Interval(
        median=statistics.median(ordered),
        low=ordered[k - 1],
        high=ordered[n - k],
        coverage=coverage(n, k),
        level=level,
        runs=n,
    )


def paired_ratios(numerators: list[float], denominators: list[float]) -> list[float]:
    """Each round's numerator over its denominator (a speedup: without / with, round by round);
    a zero denominator gives inf."""
    if len(numerators) != len(denominators):
        raise ValueError(
            f"paired values need one of each per round: {len(numerators)} against "
            f"{len(denominators)}"
        )
    return [
        top / bottom if bottom > 0 else math.inf for top, bottom in zip(numerators, denominators)
    ]


def ratio_interval(
    numerators: list[float], denominators: list[float], level: float = FAMILY_LEVEL
) -> Interval:
    """The interval of the per-round ratios' median (:func:`paired_ratios`)."""
    return median_interval(paired_ratios(numerators, denominators), level)


def joined(median: float, low: float, high: float, parts: list[Interval]) -> Interval:
    """A figure computed from independent intervals (sums, ratios of their bounds): it lies in
    [low, high] whenever every part holds its value, so it misses at most as often as all the
    parts together (Bonferroni: coverage 1 - the sum of the parts' misses), decided at
    FAMILY_LEVEL like any one look."""
    missed = sum(1.0 - part.coverage for part in parts)
    return Interval(
        median=median,
        low=low,
        high=high,
        coverage=max(0.0, 1.0 - missed),
        level=FAMILY_LEVEL,
        runs=min(part.runs for part in parts),
    )


def over(top: Interval, bottom: Interval, parts: list[Interval]) -> Interval:
    """``top`` / ``bottom`` as an interval (both positive), from ``parts``' coverage."""
    return joined(top.median / bottom.median, top.low / bottom.high, top.high / bottom.low, parts)


def against(interval: Interval, limit: float) -> str:
    """Where an interval lies against a fixed ``limit``: "above", "below" or "undecided"."""
    if not interval.decisive:
        return "undecided"
    if interval.low > limit:
        return "above"
    if interval.high < limit:
        return "below"
    return "undecided"


def ratio_decision(ratio: Interval, same_within: float = SAME_WITHIN) -> str:
    """A paired ratio's verdict: "same" within the noise threshold, "above" / "below" 1, or
    "undecided" (see the module's docstring)."""
    if not ratio.decisive:
        return "undecided"
    if ratio.low >= 1.0 / (1.0 + same_within) and ratio.high <= 1.0 + same_within:
        return "same"
    return against(ratio, 1.0)


def rounds_decision(
    numerator_runs_s: list[float], denominator_runs_s: list[float], runs: int, max_runs: int
) -> str:
    """Paired rounds' verdict, decided from the raw runs: each round's numerator / denominator,
    their median's interval at the level of the timing's looks (:func:`look_level`), judged by
    :func:`ratio_decision`: "above" (the denominator's side faster), "below", "same",
    "undecided"."""
    level = look_level(runs, max_runs)
    return ratio_decision(ratio_interval(numerator_runs_s, denominator_runs_s, level))


def rounds_faster(
    slower_runs_s: list[float], faster_runs_s: list[float], runs: int, max_runs: int
) -> str:
    """Whether the second side is faster, from paired rounds (:func:`rounds_decision` of each
    round's first / second): "yes", "no", "same" (within the noise threshold) or "undecided":
    time.json's ``cache_faster`` and batch.json's ``batch_faster`` in their stored words."""
    decided = rounds_decision(slower_runs_s, faster_runs_s, runs, max_runs)
    return {"above": "yes", "below": "no"}.get(decided, decided)


def order(one: Interval, other: Interval) -> str:
    """Two independent measurements: "below" where ``one``'s interval lies wholly below
    ``other``'s, "above" wholly above, else "undecided" (both must be decisive). Two intervals
    that each miss with chance m are in the wrong order with chance at most 2m."""
    if not (one.decisive and other.decisive):
        return "undecided"
    if one.high < other.low:
        return "below"
    if one.low > other.high:
        return "above"
    return "undecided"


def magnitude(value: float) -> int:
    """The decimal place of ``value``'s leading digit (0: units, -1: tenths)."""
    return math.floor(math.log10(abs(value)))


def place(value: float, interval: Interval) -> int:
    """The decimal place ``value`` is known to given its interval: that of the half-width's
    leading digit, never finer than 3 significant figures of ``value`` (-1: tenths), and never so
    coarse that an end of the interval loses its leading digit or rounds into another order of
    magnitude (0.5 to 5 is printed 0.5–5.0, not 0–5), nor that an end rounds past the median
    (16.5 to 38 around 17.0 is printed 16–38, not 20–40)."""
    finest = magnitude(value) - 2 if math.isfinite(value) and value else 0
    half = (interval.high - interval.low) / 2
    if half <= 0 or not math.isfinite(half):
        return finest
    chosen = magnitude(half)
    ends = [end for end in (interval.low, interval.high) if math.isfinite(end) and end]
    if ends:
        chosen = min(chosen, min(magnitude(end) for end in ends))

    def moved(end: float) -> bool:
        shown = round(end, -chosen)
        return not shown or magnitude(shown) != magnitude(end)

    def excludes_median() -> bool:  # a rounded end past the median it brackets
        low, high = round(interval.low, -chosen), round(interval.high, -chosen)
        return low > interval.median or high < interval.median

    while chosen > finest and (any(moved(end) for end in ends) or excludes_median()):
        chosen -= 1
    return max(chosen, finest)


def rounded(value: float, interval: Interval) -> float:
    """``value`` at the precision its interval allows (:func:`place`): a median of 62.3 between
    20 and 110 is 60; the value itself where it is not finite or zero."""
    if not math.isfinite(value) or value == 0:
        return value
    return round(value, -place(value, interval))


def coverage_text(value: float) -> str:
    """A coverage as a percentage, floored: never "100 %" unless it is 1 (0.996 is "99.6 %",
    0.961 "96 %")."""
    if value >= 1.0:
        return "100 %"
    percent = value * 100
    digits = 1 if percent >= 99 else 0
    shown = math.floor(percent * 10**digits + 1e-9) / 10**digits
    return f"{shown:.{digits}f} %".replace(".0 %", " %")
