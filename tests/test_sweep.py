"""The generation-length sweep: fed tokens against the formulas, the two-cost fit, and the predicted
time ratio against the token ratio (mminfer.sweep)."""

from __future__ import annotations

import json
import random

import pytest

from mminfer.counting import fed_with_cache_formula, fed_without_cache_formula
from mminfer.sweep import fit_step_cost, ratio_approach, smallest_integer_where_nonnegative, sweep


def prompt_of(length: int) -> list[int]:
    return [1] + [(17 * i) % 500 + 3 for i in range(length - 1)]


def synthetic_points(prompt_len: int, lengths: list[int], with_cache: tuple[float, float],
                     without_cache: tuple[float, float], noise: float = 0.0, seed: int = 0) -> list[dict]:
    """Sweep points whose times follow steps x a + fed x b, times (1 + noise x uniform(-1, 1))."""
    rng = random.Random(seed)
    points = []
    for n in lengths:
        fed_with = fed_with_cache_formula(prompt_len, n)
        fed_without = fed_without_cache_formula(prompt_len, n)
        a_w, b_w = with_cache
        a_o, b_o = without_cache
        points.append({
            "new_tokens": n,
            "fed_with_cache": fed_with,
            "fed_without_cache": fed_without,
            "with_cache_s": (n * a_w + fed_with * b_w) * (1 + noise * rng.uniform(-1, 1)),
            "without_cache_s": (n * a_o + fed_without * b_o) * (1 + noise * rng.uniform(-1, 1)),
        })
    return points


def costs(a_w: float, b_w: float, a_o: float, b_o: float) -> dict:
    """A fit_step_cost-shaped dict with the given per-method costs (and a joint entry left unfitted)."""
    return {
        "with_cache": {"fixed_s_per_step": a_w, "per_token_s": b_w},
        "without_cache": {"fixed_s_per_step": a_o, "per_token_s": b_o},
        "joint": {"fixed_s_per_step": None, "per_token_s": None},
    }


@pytest.fixture(scope="module")
def tiny_sweep(tiny_model):
    return sweep(tiny_model, prompt_of(9), [8, 2, 4, 4], warmup=0, runs=1, device="cpu")


# --- measuring ----------------------------------------------------------------------------------------

def test_sweep_fed_counts_equal_the_formulas_at_every_length(tiny_sweep):
    assert tiny_sweep["lengths"] == [2, 4, 8]  # sorted, duplicates dropped
    for point in tiny_sweep["points"]:
        n = point["new_tokens"]
        assert point["fed_with_cache"] == point["formula_with_cache"] == 9 + n - 1
        assert point["fed_without_cache"] == point["formula_without_cache"] == n * 9 + n * (n - 1) // 2
        assert point["calls_with_cache"] == point["calls_without_cache"] == n
        assert point["token_ratio"] == point["fed_without_cache"] / point["fed_with_cache"]


def test_sweep_decode_time_is_cached_time_after_the_first_token(tiny_sweep):
    for point in tiny_sweep["points"]:
        expected = (point["with_cache_s"] - tiny_sweep["ttft_s"]) / (point["new_tokens"] - 1)
        assert point["decode_s_per_token"] == pytest.approx(expected)
    assert tiny_sweep["decode_s_per_token"] == tiny_sweep["points"][-1]["decode_s_per_token"]


def test_sweep_result_survives_a_json_round_trip(tiny_sweep):
    assert json.loads(json.dumps(tiny_sweep)) == tiny_sweep


# --- fitting ------------------------------------------------------------------------------------------

def test_fit_recovers_known_costs_from_exact_timings():
    points = synthetic_points(40, [1, 2, 4, 8, 16, 32, 64], with_cache=(3e-3, 2e-5), without_cache=(4e-3, 1e-5))
    fit = fit_step_cost(points)
    assert fit["with_cache"]["fixed_s_per_step"] == pytest.approx(3e-3, rel=1e-9)
    assert fit["with_cache"]["per_token_s"] == pytest.approx(2e-5, rel=1e-9)
    assert fit["without_cache"]["fixed_s_per_step"] == pytest.approx(4e-3, rel=1e-9)
    assert fit["without_cache"]["per_token_s"] == pytest.approx(1e-5, rel=1e-9)
    assert fit["with_cache"]["r2"] == pytest.approx(1.0)
    assert fit["without_cache"]["r2"] == pytest.approx(1.0)


def test_fit_recovers_known_costs_from_noisy_timings_within_their_standard_errors():
    # +-2% noise on times of 50 ms to 4 s; the true costs must lie within 4 reported standard errors
    lengths = [8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256]
    points = synthetic_points(200, lengths, with_cache=(5e-3, 5e-5), without_cache=(5e-3, 5e-5),
                              noise=0.02, seed=0)
    fit = fit_step_cost(points)
    for method in ("with_cache", "without_cache", "joint"):
        entry = fit[method]
        assert abs(entry["fixed_s_per_step"] - 5e-3) <= 4 * entry["fixed_s_per_step_se"], method
        assert abs(entry["per_token_s"] - 5e-5) <= 4 * entry["per_token_s_se"], method
        assert entry["fixed_s_per_step"] == pytest.approx(5e-3, rel=0.2), method
        assert entry["per_token_s"] == pytest.approx(5e-5, rel=0.2), method
        assert entry["r2"] > 0.99


def test_fit_reports_a_negative_cost_as_fitted():
    points = synthetic_points(10, [2, 4, 8, 16], with_cache=(1e-3, -1e-6), without_cache=(1e-3, 1e-6))
    fit = fit_step_cost(points)
    assert fit["with_cache"]["per_token_s"] == pytest.approx(-1e-6, rel=1e-6)


def test_fit_with_a_single_length_leaves_the_costs_unfitted():
    fit = fit_step_cost(synthetic_points(10, [8], with_cache=(1e-3, 1e-5), without_cache=(1e-3, 1e-5)))
    assert fit["with_cache"]["fixed_s_per_step"] is None
    assert fit["with_cache"]["per_token_s"] is None
    assert "note" in fit["with_cache"]


# --- predicting the time ratio ------------------------------------------------------------------------

def test_predicted_ratios_at_one_length_match_hand_computation():
    # P = 1, N = 3, a = b = 1 s: fed with = 1 + 2 = 3, without = 3 + 3 = 6
    # time with = 3 x 1 + 3 x 1 = 6, without = 3 x 1 + 6 x 1 = 9 -> time ratio 1.5, token ratio 2
    result = ratio_approach(costs(1.0, 1.0, 1.0, 1.0), prompt_len=1, new_tokens=3)
    assert result["costs_from"] == "per_method"
    at = result["at_new_tokens"]
    assert at["token_ratio"] == pytest.approx(2.0)
    assert at["predicted_time_ratio"] == pytest.approx(1.5)
    assert at["fraction"] == pytest.approx(0.75)
    assert at["fixed_share_with_cache"] == pytest.approx(0.5)  # 3 of 6 s


def test_ratio_approach_new_tokens_for_fraction_matches_hand_solution():
    # P = 1, a = b = 1 for both methods: c_w = b + a N / N = 2 and c_o = 1 + 2 / (N + 1), so
    # fraction(N) = c_o / c_w = (N + 3) / (2 (N + 1)), falling from 1 towards 0.5.
    # fraction <= 0.58  <=>  N + 3 <= 1.16 N + 1.16  <=>  N >= 11.5  ->  N = 12
    # (fraction(11) = 14/24 = 0.583, fraction(12) = 15/26 = 0.577).
    result = ratio_approach(costs(1.0, 1.0, 1.0, 1.0), prompt_len=1, new_tokens=64, fractions=(0.58,))
    assert result["new_tokens_for_fraction"] == {"0.58": 12}
    assert result["limit_fraction_long_generation"] == pytest.approx(0.5)  # b_o / (a_w + b_w) = 1 / 2


def test_ratio_approach_prompt_len_for_fraction_matches_hand_solution():
    # N = 3, a = b = 1 for both: c_w = 1 + 3 / (P + 2), c_o = 1 + 1 / (P + 1), so
    # fraction(P) = (P + 2)^2 / ((P + 1)(P + 5)) >= 0.9  <=>  P^2 - 14 P - 5 >= 0  <=>  P >= 7 + sqrt(54) = 14.35
    # -> P = 15 (fraction(14) = 256/285 = 0.898, fraction(15) = 289/320 = 0.903).
    result = ratio_approach(costs(1.0, 1.0, 1.0, 1.0), prompt_len=1, new_tokens=3, fractions=(0.9,))
    assert result["prompt_len_for_fraction"] == {"0.9": 15}
    assert result["limit_fraction_long_prompt"] == pytest.approx(1.0)  # b_o / b_w


def test_ratio_approach_gives_none_where_the_fraction_is_never_reached():
    # P = 1, a = b = 1: fraction(N) = (N + 3) / (2 (N + 1)) > 0.5 for every N: never falls to 0.5.
    # b_o / b_w = 0.5: the fraction for a long prompt tends to 0.5, never reaches 0.9.
    result = ratio_approach(costs(1.0, 1.0, 1.0, 1.0), prompt_len=1, new_tokens=3, fractions=(0.5,))
    assert result["new_tokens_for_fraction"] == {"0.5": None}
    result = ratio_approach(costs(1.0, 1.0, 1.0, 0.5), prompt_len=1, new_tokens=3, fractions=(0.9,))
    assert result["prompt_len_for_fraction"] == {"0.9": None}


def test_ratio_approach_falls_back_to_the_joint_fit_when_a_method_fit_is_unphysical():
    fit = costs(1e-3, -1e-6, 1e-3, 1e-6)
    fit["joint"] = {"fixed_s_per_step": 1e-3, "per_token_s": 1e-6}
    result = ratio_approach(fit, prompt_len=10, new_tokens=16)
    assert result["costs_from"] == "joint"
    assert "with_cache" in result["problems"][0]
    assert result["costs"]["with_cache"] == {"fixed_s_per_step": 1e-3, "per_token_s": 1e-6}


def test_ratio_approach_predicts_nothing_without_a_physical_fit():
    result = ratio_approach(costs(1e-3, -1e-6, 1e-3, 1e-6), prompt_len=10, new_tokens=16)
    assert result["costs_from"] is None
    assert result["at_new_tokens"] is None
    assert result["curve"] == []
    assert len(result["problems"]) == 2  # the with-cache fit, then the joint one


@pytest.mark.parametrize("coefficients, expected", [
    ([-5.0, -14.0, 1.0], 15),  # n^2 - 14 n - 5 >= 0 from n = 14.35
    ([3.0, 1.0, 0.0], 1),      # already true at the lowest n
    ([-10.0, 1.0, 0.0], 10),   # linear, the root itself
    ([-1.0, 0.0, -1.0], None),  # never
    ([-1.0, 4.0, -1.0], 1),    # -n^2 + 4 n - 1 >= 0 between 0.27 and 3.73
])
def test_smallest_integer_where_nonnegative_solves_the_quadratic(coefficients, expected):
    assert smallest_integer_where_nonnegative(coefficients) == expected
