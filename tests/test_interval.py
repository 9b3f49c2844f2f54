"""The interval of a median (mminfer.records.interval): its coverage, its decisions, its looks."""

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mminfer.records import interval
from mminfer.records.interval import Interval, look_level, median_interval, ratio_decision

RUNS = st.lists(st.floats(min_value=1e-4, max_value=10.0), min_size=1, max_size=15)


@given(RUNS, st.sampled_from([0.75, 0.9, 0.975]))
def test_an_interval_holds_its_median_between_two_of_its_runs(runs, level):
    found = median_interval(runs, level)
    assert found.low <= found.median <= found.high
    assert found.low in runs and found.high in runs
    assert found.runs == len(runs)
    if found.coverage < level:  # too few runs for the level: [min, max], not decisive
        assert (found.low, found.high) == (min(runs), max(runs)) and not found.decisive


@pytest.mark.parametrize("n, k, expected", [(3, 1, 0.75), (5, 1, 0.9375), (9, 2, 0.9609375)])
def test_coverage_is_the_binomial_tail(n, k, expected):
    assert interval.coverage(n, k) == pytest.approx(expected)


@pytest.mark.parametrize("draw", ["lognormal", "bimodal"])
def test_the_stated_coverage_holds_on_skewed_and_bimodal_runs(draw):
    rng = random.Random(7)

    def run() -> float:
        if draw == "lognormal":
            return rng.lognormvariate(0.0, 1.0)  # median 1
        slow = rng.random() < 0.3  # a busy machine's slow band, 3 x the fast one
        return rng.uniform(2.85, 3.15) if slow else rng.uniform(0.95, 1.05)

    truth = 1.0 if draw == "lognormal" else 0.95 + 0.1 * 0.5 / 0.7
    trials, held = 4000, 0
    for _ in range(trials):
        found = median_interval([run() for _ in range(9)], 0.9)
        held += found.low <= truth <= found.high
    assert held / trials >= found.coverage - 0.02


def test_looking_after_every_round_spends_the_family_s_ten_percent():
    assert look_level(3, 9) == pytest.approx(0.975)  # 3 looks can decide (7, 8, 9 rounds)
    assert look_level(9, 9) == pytest.approx(0.9)  # one look
    assert look_level(3, 3) == pytest.approx(0.9) and not median_interval([1, 2, 3]).decisive


def decided(ratios: list[float]) -> str:
    return ratio_decision(median_interval(ratios, 0.9))


def test_a_ratio_is_decided_only_by_its_interval():
    assert decided([2.0] * 5) == "above"
    assert decided([0.5] * 5) == "below"
    assert decided([1.01, 0.99, 1.02, 1.0, 0.98]) == "same"
    assert decided([2.0] * 4 + [0.9]) == "undecided"  # [min, max] at 5 runs straddles 1
    assert decided([2.0] * 3) == "undecided"  # 75 %: too few rounds for the level
    assert decided([1.01, 1.2, 1.0, 0.99, 1.0]) == "undecided"  # overlap is not "the same"


def test_two_measurements_are_ordered_only_when_their_intervals_part():
    low = Interval(median=1.0, low=0.9, high=1.1, coverage=0.96, level=0.9, runs=9)
    high = Interval(median=2.0, low=1.8, high=2.2, coverage=0.96, level=0.9, runs=9)
    near = Interval(median=1.2, low=1.05, high=1.3, coverage=0.96, level=0.9, runs=9)
    assert interval.order(low, high) == "below" and interval.order(high, low) == "above"
    assert interval.order(low, near) == "undecided"
    assert interval.against(low, 1.5) == "below" and interval.against(near, 1.1) == "undecided"


@pytest.mark.parametrize(
    "median, low, high, coverage, expected",
    [
        # the median to three significant digits, only the ends at the interval's precision
        (5.0, 0.5, 5.0, 0.996, "5.00배 (99.6 % 구간 0.5–5.0배)"),  # the low end keeps its digit
        (62.3, 20.0, 110.0, 0.961, "62.3배 (96 % 구간 20–110배)"),  # coverage floored
        (999.6, 990.0, 1010.0, 0.9, "1,000배 (90 % 구간 990–1,010배)"),  # rounds up a digit
        (1.0, 0.96, 1.04, 0.9, "1.00배 (90 % 구간 0.96–1.04배)"),  # 0.96 not rounded to 1.0
        (5.0, 4.9, 5.1, 1.0, "5.00배 (100 % 구간 4.90–5.10배)"),
        (17.0, 16.5, 38.0, 0.98, "17.0배 (98 % 구간 16–38배)"),  # not 20–40, past the median
    ],
)
def test_an_interval_prints_its_ends_in_their_own_order_of_magnitude(
    median, low, high, coverage, expected
):
    from mminfer.report.render import interval_text

    found = Interval(median=median, low=low, high=high, coverage=coverage, level=0.9, runs=9)
    assert interval_text(found, 1.0, "배") == expected


@given(st.floats(1e-3, 1e3), st.floats(1.0, 1e3))
def test_no_printed_end_rounds_to_zero_or_another_magnitude(low, width):
    import math

    low = float(f"{low:.3g}")  # ends of 3 significant figures, the finest a figure is shown at
    high = float(f"{low * width:.3g}")
    found = Interval(median=high, low=low, high=high, coverage=0.9, level=0.9, runs=9)
    for end in (low, high):
        shown = interval.rounded(end, found)
        assert shown and math.floor(math.log10(shown)) == math.floor(math.log10(end))
    assert interval.coverage_text(0.9999) != "100 %" and interval.coverage_text(1.0) == "100 %"
