"""Beyond the task: what the cache saves as the generation gets longer, in tokens and in time.

For one prompt of P tokens and several generation lengths N, greedy generation (the task's arguments)
runs with and without the cache. Per length we record the tokens fed into ``forward`` (and the two
formulas of :mod:`mminfer.counting`) and the median time of each method, then

    token_ratio = fed_without_cache / fed_with_cache = (N P + N (N - 1) / 2) / (P + N - 1)
    time_ratio  = without_cache_s / with_cache_s     (the speedup)

The time ratio stays far below the token ratio. A two-term cost model explains why:

    time = steps x fixed_s_per_step + fed_tokens x per_token_s        (steps = N for both methods)

Every step, cached or not, pays a fixed cost (Python, the sampling code, one launch per kernel, one
read of every weight); the cached step feeds a single token, so for it the fixed cost is most of the
work. :func:`fit_step_cost`
fits the two costs from the measurements and :func:`ratio_approach` predicts from them how the time
ratio compares with the token ratio at other generation and prompt lengths.

The model leaves out attention's quadratic term (a step without the cache attends (P + i)^2 pairs);
for MiniMind's sizes and lengths of a few hundred tokens it is small next to the linear layers.
"""

from __future__ import annotations

import math

import torch

from mminfer.counting import ForwardRecorder, fed_counts, fed_with_cache_formula, fed_without_cache_formula
from mminfer.greedy import greedy_generate
from mminfer.sampling import temperature_key
from mminfer.timing import time_method

COST_MODEL = "time = steps x fixed_s_per_step + fed_tokens x per_token_s (steps = new tokens = forward calls)"


# --- measuring -------------------------------------------------------------------------------------

def count_fed(model, prompt_ids: list[int], new_tokens: int, use_cache: bool, device) -> ForwardRecorder:
    """One greedy generation with a recorder around ``forward``: tokens fed per call."""
    recorder = ForwardRecorder()
    greedy_generate(model, prompt_ids, new_tokens, use_cache, device, recorder)
    return recorder


def measure_point(model, prompt_ids: list[int], new_tokens: int, warmup: int, runs: int, device) -> dict:
    """Fed tokens (counted and by formula) and median times of both methods at one length N."""
    prompt_len = len(prompt_ids)
    with_cache = count_fed(model, prompt_ids, new_tokens, True, device)
    without_cache = count_fed(model, prompt_ids, new_tokens, False, device)
    timed_with = time_method(model, prompt_ids, new_tokens, True, warmup, runs, device)
    timed_without = time_method(model, prompt_ids, new_tokens, False, warmup, runs, device)
    point = fed_counts(prompt_len, new_tokens, with_cache, without_cache)
    del point["prompt_len"]  # the same for every point: kept once, at the top of sweep.json
    return point | {
        "with_cache_s": timed_with["median_s"],
        "without_cache_s": timed_without["median_s"],
        "token_ratio": without_cache.fed / with_cache.fed,
        "time_ratio": timed_without["median_s"] / timed_with["median_s"],
        "with_cache_runs_s": timed_with["runs_s"],
        "without_cache_runs_s": timed_without["runs_s"],
    }


def sweep(model, prompt_ids: list[int], lengths: list[int], warmup: int, runs: int, device) -> dict:
    """sweep.json: cost against generation length after one prompt.

    For each N in ``lengths`` (sorted, duplicates dropped): tokens fed with and without the cache,
    counted through ``model.generate`` and by formula, and the median time of ``runs`` timed
    generations after ``warmup`` untimed ones (:func:`mminfer.timing.time_method`).

    - ttft_s, time to first token: the median time of generate with max_new_tokens=1 and the cache,
      i.e. one forward of the whole prompt (the prefill) plus one argmax.
    - decode_s_per_token, per point: (with_cache_s - ttft_s) / (N - 1), the cached path's time per
      later token (None at N = 1); the top-level value is the one at the longest length.
    - fit: :func:`fit_step_cost` of the points; approach: :func:`ratio_approach` at the longest length.
    """
    if not lengths or min(lengths) < 1:
        raise ValueError(f"lengths must be positive integers, got {lengths}")
    prompt_len = len(prompt_ids)
    points = []
    for new_tokens in sorted(set(int(n) for n in lengths)):
        points.append(measure_point(model, prompt_ids, new_tokens, warmup, runs, device))

    ttft = time_method(model, prompt_ids, 1, True, warmup, runs, device)
    ttft_s = ttft["median_s"]
    for point in points:
        steps_after_first = point["new_tokens"] - 1
        if steps_after_first > 0:
            point["decode_s_per_token"] = (point["with_cache_s"] - ttft_s) / steps_after_first
        else:
            point["decode_s_per_token"] = None

    fit = fit_step_cost(points)
    longest = points[-1]["new_tokens"]
    return {
        "prompt_len": prompt_len,
        "lengths": [point["new_tokens"] for point in points],
        "warmup": warmup,
        "runs": runs,
        "threads": torch.get_num_threads(),
        "points": points,
        "ttft_s": ttft_s,
        "ttft_runs_s": ttft["runs_s"],
        "decode_s_per_token": points[-1]["decode_s_per_token"],
        "fit": fit,
        "approach": ratio_approach(fit, prompt_len, new_tokens=longest),
    }


# --- fitting the two costs ------------------------------------------------------------------------

def least_squares_two(x1: list[float], x2: list[float], y: list[float]) -> dict:
    """Least squares of y = a x1 + b x2 (no intercept), closed form.

    The columns are first scaled to unit length (u = x1 / |x1|, v = x2 / |x2|), so the normal equations

        [1 c] [a']   [u.y]
        [c 1] [b'] = [v.y]      with c = u.v (the cosine between the columns)

    give a' = (u.y - c v.y) / (1 - c^2), b' = (v.y - c u.y) / (1 - c^2), and a = a' / |x1|, b = b' / |x2|.
    r2 = 1 - SS_res / SS_tot with SS_tot around the mean of y. With n > 2 points the standard errors
    are se(a) = s / (|x1| sqrt(1 - c^2)), se(b) = s / (|x2| sqrt(1 - c^2)), s^2 = SS_res / (n - 2).
    Columns that are (nearly) parallel, 1 - c^2 < 1e-12, cannot be told apart: every value is None.
    """
    n = len(y)
    norm1 = math.sqrt(sum(value * value for value in x1))
    norm2 = math.sqrt(sum(value * value for value in x2))
    result = {"a": None, "b": None, "r2": None, "a_se": None, "b_se": None, "n": n}
    if n < 2 or norm1 == 0 or norm2 == 0:
        result["note"] = "fewer than two points, or a zero column: the two costs cannot be separated"
        return result
    u = [value / norm1 for value in x1]
    v = [value / norm2 for value in x2]
    cosine = sum(ui * vi for ui, vi in zip(u, v))
    determinant = (1.0 - cosine) * (1.0 + cosine)
    if determinant < 1e-12:
        result["note"] = "the step and token columns are (nearly) proportional: the costs cannot be separated"
        return result
    uy = sum(ui * yi for ui, yi in zip(u, y))
    vy = sum(vi * yi for vi, yi in zip(v, y))
    a = (uy - cosine * vy) / determinant / norm1
    b = (vy - cosine * uy) / determinant / norm2

    residuals = [yi - a * x1i - b * x2i for x1i, x2i, yi in zip(x1, x2, y)]
    ss_res = sum(r * r for r in residuals)
    mean_y = sum(y) / n
    ss_tot = sum((yi - mean_y) ** 2 for yi in y)
    result["a"] = a
    result["b"] = b
    result["r2"] = 1.0 - ss_res / ss_tot if ss_tot > 0 else None
    if n > 2:
        s = math.sqrt(ss_res / (n - 2))
        result["a_se"] = s / (norm1 * math.sqrt(determinant))
        result["b_se"] = s / (norm2 * math.sqrt(determinant))
    return result


def fit_costs(steps: list[float], fed: list[float], seconds: list[float]) -> dict:
    """One method's costs by relative least squares: minimise sum(((t - a n - b f) / t)^2).

    Timing noise grows with the time, and the times of a sweep span decades (a few ms to seconds):
    plain least squares would fit the longest runs and ignore the short ones, which carry the fixed
    cost. Dividing each row by its time, (n / t) a + (f / t) b = 1, weighs every point by its relative
    error; :func:`least_squares_two` solves that, so the standard errors are those of the relative
    model. r2 is then computed on the times themselves: 1 - sum((t - a n - b f)^2) / sum((t - mean t)^2).
    """
    entry = {
        "fixed_s_per_step": None,
        "per_token_s": None,
        "r2": None,
        "fixed_s_per_step_se": None,
        "per_token_s_se": None,
        "max_relative_residual": None,
        "points": len(seconds),
    }
    if any(t <= 0 for t in seconds):
        entry["note"] = "a time is not positive: no relative fit"
        return entry
    solved = least_squares_two([n / t for n, t in zip(steps, seconds)], [f / t for f, t in zip(fed, seconds)],
                               [1.0] * len(seconds))
    if solved["a"] is None:
        entry["note"] = solved["note"]
        return entry
    a = solved["a"]
    b = solved["b"]
    predicted = [a * n + b * f for n, f in zip(steps, fed)]
    ss_res = sum((t - p) ** 2 for t, p in zip(seconds, predicted))
    mean_t = sum(seconds) / len(seconds)
    ss_tot = sum((t - mean_t) ** 2 for t in seconds)
    entry["fixed_s_per_step"] = a
    entry["per_token_s"] = b
    entry["r2"] = 1.0 - ss_res / ss_tot if ss_tot > 0 else None
    entry["fixed_s_per_step_se"] = solved["a_se"]
    entry["per_token_s_se"] = solved["b_se"]
    entry["max_relative_residual"] = max(abs(t - p) / t for t, p in zip(seconds, predicted))
    return entry


def fit_step_cost(points: list[dict]) -> dict:
    """Fit time = steps x fixed_s_per_step + fed_tokens x per_token_s, steps = new_tokens.

    The fixed cost per step is everything a forward call costs regardless of how many tokens it feeds:
    Python and module dispatch, one launch per kernel, the argmax and the concatenation in generate,
    and reading every weight once (a one-token step is bound by memory traffic, not arithmetic).

    Decisions:
    - relative least squares without intercept (:func:`fit_costs`): every point counts by its relative
      error, since the times span decades;
    - each method is fitted on its own points ("with_cache", "without_cache"): a cached step is one
      token against a cache (matrix-vector products, the explicit-softmax attention), a step without
      the cache a matrix-matrix product over the whole sequence (fused attention), so their costs need
      not be equal. "joint" fits one pair to both methods' points together: if it fits well, one cost
      model explains both methods. :func:`ratio_approach` prefers the per-method pair and falls back on
      the joint one when a per-method fit is not physical.

    With the cache fed = P + N - 1 = N + (P - 1), so its per-token cost rests on the prompt alone (the
    intercept P - 1) and is poorly determined from noisy timings: look at per_token_s_se. Values are
    reported as fitted, negative ones included; nothing is clamped.
    """
    columns = {}
    for method in ("with_cache", "without_cache"):
        steps = [float(point["new_tokens"]) for point in points]
        fed = [float(point[f"fed_{method}"]) for point in points]
        seconds = [float(point[f"{method}_s"]) for point in points]
        columns[method] = (steps, fed, seconds)

    result = {"model": COST_MODEL,
              "method": "relative least squares without intercept; each method on its own points, and joint"}
    for method, (steps, fed, seconds) in columns.items():
        result[method] = fit_costs(steps, fed, seconds)
    joint_steps = columns["with_cache"][0] + columns["without_cache"][0]
    joint_fed = columns["with_cache"][1] + columns["without_cache"][1]
    joint_seconds = columns["with_cache"][2] + columns["without_cache"][2]
    result["joint"] = fit_costs(joint_steps, joint_fed, joint_seconds)
    return result


# --- predicting the time ratio at other lengths ------------------------------------------------------

def poly_mul(p: list[float], q: list[float]) -> list[float]:
    """Product of two polynomials given as coefficient lists [c0, c1, ...] (c0 the constant)."""
    product = [0.0] * (len(p) + len(q) - 1)
    for i, pi in enumerate(p):
        for j, qj in enumerate(q):
            product[i + j] += pi * qj
    return product


def poly_sub(p: list[float], q: list[float]) -> list[float]:
    size = max(len(p), len(q))
    p = p + [0.0] * (size - len(p))
    q = q + [0.0] * (size - len(q))
    return [pi - qi for pi, qi in zip(p, q)]


def smallest_integer_where_nonnegative(coefficients: list[float], lowest: int = 1) -> int | None:
    """The smallest integer n >= lowest with c0 + c1 n + c2 n^2 >= 0, or None if there is none.

    The set where a polynomial of degree <= 2 is >= 0 starts either at ``lowest`` or right after one of
    its real roots, so the candidates are ``lowest`` and ceil(root) (with +-1 against rounding).
    """
    c0, c1, c2 = (coefficients + [0.0, 0.0, 0.0])[:3]
    roots = []
    if c2 != 0.0:
        discriminant = c1 * c1 - 4.0 * c2 * c0
        if discriminant >= 0.0:
            root = math.sqrt(discriminant)
            roots = [(-c1 - root) / (2.0 * c2), (-c1 + root) / (2.0 * c2)]
    elif c1 != 0.0:
        roots = [-c0 / c1]
    candidates = {lowest}
    for root in roots:
        if math.isfinite(root) and root < 2**62:
            for offset in (-1, 0, 1):
                candidates.add(max(lowest, math.ceil(root) + offset))
    satisfied = [n for n in candidates if c0 + c1 * n + c2 * n * n >= 0.0]
    return min(satisfied) if satisfied else None


def predicted_time(cost: dict, steps: int, fed: int) -> float:
    return steps * cost["fixed_s_per_step"] + fed * cost["per_token_s"]


def ratios_at(with_cache: dict, without_cache: dict, prompt_len: int, new_tokens: int) -> dict:
    fed_with = fed_with_cache_formula(prompt_len, new_tokens)
    fed_without = fed_without_cache_formula(prompt_len, new_tokens)
    time_with = predicted_time(with_cache, new_tokens, fed_with)
    time_without = predicted_time(without_cache, new_tokens, fed_without)
    token_ratio = fed_without / fed_with
    time_ratio = time_without / time_with
    return {
        "new_tokens": new_tokens,
        "prompt_len": prompt_len,
        "token_ratio": token_ratio,
        "predicted_time_ratio": time_ratio,
        "fraction": time_ratio / token_ratio,
        "fixed_share_with_cache": new_tokens * with_cache["fixed_s_per_step"] / time_with,
        "fixed_share_without_cache": new_tokens * without_cache["fixed_s_per_step"] / time_without,
    }


def physical_problem(name: str, cost: dict) -> str | None:
    """Why a fitted cost pair cannot drive the prediction (None when it can): the model needs
    fixed_s_per_step >= 0 and per_token_s > 0."""
    a = cost.get("fixed_s_per_step")
    b = cost.get("per_token_s")
    if a is None or b is None:
        return f"{name}: no fitted costs ({cost.get('note', 'not fitted')})"
    if a < 0 or b <= 0:
        return f"{name}: fixed_s_per_step={a:.3g}, per_token_s={b:.3g} (needs fixed >= 0, per-token > 0)"
    return None


def choose_costs(fit: dict, source: str) -> tuple[str | None, dict | None, list[str]]:
    """(source used, {"with_cache": cost, "without_cache": cost}, problems met on the way).

    source "per_method": each method's own fit; "joint": the shared fit for both methods; "auto": the
    per-method fits if both are physical, else the joint fit if it is, else none.
    """
    problems = []
    if source in ("auto", "per_method"):
        per_method = {"with_cache": fit["with_cache"], "without_cache": fit["without_cache"]}
        found = [physical_problem(name, cost) for name, cost in per_method.items()]
        found = [problem for problem in found if problem]
        if not found:
            return "per_method", per_method, problems
        problems += found
    if source in ("auto", "joint"):
        problem = physical_problem("joint", fit["joint"])
        if problem is None:
            return "joint", {"with_cache": fit["joint"], "without_cache": fit["joint"]}, problems
        problems.append(problem)
    return None, None, problems


def ratio_approach(fit: dict, prompt_len: int, new_tokens: int = 64, fractions: tuple = (0.5, 0.9),
                   lengths: list[int] | None = None, source: str = "auto") -> dict:
    """How the predicted time ratio compares with the token ratio, from the fitted costs.

    With costs a (fixed per step) and b (per token) for each method, w = with cache, o = without:

        time_ratio / token_ratio = fraction = c_o / c_w,   the methods' time per fed token:
        c_o = b_o + a_o N / F_o = b_o + 2 a_o / (2P + N - 1)     F_o = N P + N (N - 1) / 2
        c_w = b_w + a_w N / F_w = b_w + a_w N / (P + N - 1)      F_w = P + N - 1

    The time ratio falls short of the token ratio because a cached step feeds one token yet pays the
    whole fixed cost a_w. A longer generation does not close the gap: as N grows c_o falls towards b_o,
    c_w rises towards a_w + b_w, so the fraction falls from 1 (N = 1: the two methods are the same call)
    towards ``limit_fraction_long_generation`` = b_o / (a_w + b_w) (the time ratio still grows, as
    N b_o / (2 (a_w + b_w)), but the token ratio grows as N / 2). A longer prompt does close it: as P
    grows with N fixed, both methods' fixed costs are spread over many tokens and the fraction tends to
    ``limit_fraction_long_prompt`` = b_o / b_w (1 with the joint fit; with per-method fits it rests on
    the poorly determined b_w, see :func:`fit_step_cost`).

    Criteria, for each x in ``fractions`` (keys "0.5", "0.9"):
    - new_tokens_for_fraction[x]: the smallest N at which the time ratio has fallen to x of the token
      ratio (c_o <= x c_w), prompt fixed at ``prompt_len``; None if it never does.
    - prompt_len_for_fraction[x]: the smallest prompt length P at which, for ``new_tokens`` new
      tokens, the time ratio reaches x of the token ratio (c_o >= x c_w); None if it never does.
    Multiplying out the denominators makes each condition a quadratic inequality in N or P, solved
    exactly (:func:`smallest_integer_where_nonnegative`).

    Costs (``source``): "auto" takes the per-method fits when both are physical (fixed_s_per_step >= 0,
    per_token_s > 0), else the joint fit; "costs_from" says which and "problems" why. When no fit is
    physical nothing is predicted: "costs_from" is None and every prediction None.
    """
    keys = [temperature_key(x) for x in fractions]
    costs_from, chosen, problems = choose_costs(fit, source)
    result = {
        "prompt_len": prompt_len,
        "new_tokens": new_tokens,
        "costs_from": costs_from,
        "problems": problems,
        "costs": None,
        "at_new_tokens": None,
        "limit_fraction_long_generation": None,
        "limit_fraction_long_prompt": None,
        "new_tokens_for_fraction": {key: None for key in keys},
        "prompt_len_for_fraction": {key: None for key in keys},
        "curve": [],
    }
    if chosen is None:
        return result

    costs = {}
    for method, cost in chosen.items():
        costs[method] = {"fixed_s_per_step": cost["fixed_s_per_step"], "per_token_s": cost["per_token_s"]}
    result["costs"] = costs
    a_w = costs["with_cache"]["fixed_s_per_step"]
    b_w = costs["with_cache"]["per_token_s"]
    a_o = costs["without_cache"]["fixed_s_per_step"]
    b_o = costs["without_cache"]["per_token_s"]
    P = prompt_len
    N = new_tokens
    result["at_new_tokens"] = ratios_at(costs["with_cache"], costs["without_cache"], P, N)
    result["limit_fraction_long_generation"] = b_o / (a_w + b_w)
    result["limit_fraction_long_prompt"] = b_o / b_w

    for x, key in zip(fractions, keys):
        # In N, prompt P fixed: c_o <= x c_w, both sides times (2P + N - 1)(P + N - 1) > 0:
        #   x [b_w (P + N - 1) + a_w N] (2P + N - 1) - [b_o (2P + N - 1) + 2 a_o] (P + N - 1) >= 0
        with_side = poly_mul([x * b_w * (P - 1), x * (b_w + a_w)], [2 * P - 1, 1.0])
        without_side = poly_mul([b_o * (2 * P - 1) + 2 * a_o, b_o], [P - 1, 1.0])
        result["new_tokens_for_fraction"][key] = smallest_integer_where_nonnegative(poly_sub(with_side, without_side))
        # In P, N fixed: c_o >= x c_w, both sides times (2P + N - 1)(P + N - 1) > 0:
        #   [b_o (2P + N - 1) + 2 a_o] (P + N - 1) - x [b_w (P + N - 1) + a_w N] (2P + N - 1) >= 0
        without_side = poly_mul([b_o * (N - 1) + 2 * a_o, 2 * b_o], [N - 1, 1.0])
        with_side = poly_mul([x * (b_w * (N - 1) + a_w * N), x * b_w], [N - 1, 2.0])
        result["prompt_len_for_fraction"][key] = smallest_integer_where_nonnegative(poly_sub(without_side, with_side))

    if lengths is None:
        lengths = [2**k for k in range(14)]  # 1 ... 8192
    grid = sorted(set(lengths) | {N})
    result["curve"] = [ratios_at(costs["with_cache"], costs["without_cache"], P, n) for n in grid]
    return result
