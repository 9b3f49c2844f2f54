"""Beyond the task: what the cache saves as the generation gets longer, in tokens and in time.

Greedy generation is deterministic, so the first N steps of a long generation are the N-token
generation: one clocked generation per method gives every length (time(N) = the first N steps).
One cost model, ``step_s = fixed_s[method] + per_token_s x fed + per_pair_s x attended_pairs``, is
fitted by least squares over every step of both methods: a fixed cost per step for each method (Python,
kernel launches, one read of every weight; the methods run different attention code), the linear
layers' work per token, and attention's work per (query, key) pair under the causal mask — the
quadratic term that slows every uncached step. Coefficients are held non-negative (a negative cost is
a fitting artefact, never a finding); predictions stop at EXTRAPOLATE_UP_TO x the measured length and
at max_position_embeddings.
"""

from __future__ import annotations

import itertools
import statistics

import torch

from mminfer.counting import (
    ForwardRecorder,
    fed_counts,
    fed_with_cache_formula,
    fed_without_cache_formula,
)
from mminfer.greedy import greedy_generate
from mminfer.timing import alternate, load_average, synced_clock

COST_MODEL = "step_s = fixed_s[method] + per_token_s x fed + per_pair_s x attended_pairs"
TERMS = ["fixed_s_with_cache", "fixed_s_without_cache", "per_token_s", "per_pair_s"]
METHODS = {"with_cache": True, "without_cache": False}
HOLDS_WITHIN = 0.25  # the fit "holds" where its median relative residual per method is below this
EXTRAPOLATE_UP_TO = 4


def step_seconds(
    model, prompt_ids: list[int], new_tokens: int, use_cache: bool, device
) -> tuple[list, list]:
    """One greedy generation, clocked: (seconds of each step, tokens fed at each step). A step runs from
    the start of its forward call to the start of the next (the last: until generate returns), so it
    includes generate's own work between the calls."""
    clock = synced_clock(device)
    recorder = ForwardRecorder(clock=clock)
    greedy_generate(model, prompt_ids, new_tokens, use_cache, device, recorder)
    ends = recorder.started[1:] + [clock()]
    return [end - start for start, end in zip(recorder.started, ends)], recorder.fed_per_call


def attended_pairs(prompt_len: int, fed: int, step: int) -> int:
    """(query, key) pairs under the causal mask at ``step``, which feeds ``fed`` tokens and ends with
    P + step tokens in context: P (P + 1) / 2 for the prefill, P + i for a cached step, (P + i)(P + i + 1) / 2
    for an uncached one."""
    context = prompt_len + step
    return fed * context - fed * (fed - 1) // 2


def measure_steps(
    model, prompt_ids: list[int], longest: int, warmup: int, runs: int, device, warmup_tokens: int
) -> dict:
    """Per-step times and tokens of both methods, in mminfer.timing's interleaved order: warm-ups of both
    (short: first-call costs do not depend on the length), then ``runs`` rounds of (with cache, without
    cache). With several runs each step's time is the median over them."""
    alternate(
        lambda use_cache: step_seconds(model, prompt_ids, warmup_tokens, use_cache, device), warmup
    )
    measured = alternate(
        lambda use_cache: step_seconds(model, prompt_ids, longest, use_cache, device), runs
    )
    steps = {}
    for method, use_cache in METHODS.items():
        runs_of = measured[use_cache]  # (step seconds, fed per step) of each run
        steps[f"{method}_s"] = [
            statistics.median(values) for values in zip(*(s for s, _ in runs_of))
        ]
        steps[f"fed_{method}"] = list(runs_of[0][1])
    return steps


def length_point(prompt_len: int, new_tokens: int, steps: dict) -> dict:
    """Counts, formulas and times of the first ``new_tokens`` steps (= the N-token generation)."""
    point = fed_counts(
        prompt_len,
        new_tokens,
        steps["fed_with_cache"][:new_tokens],
        steps["fed_without_cache"][:new_tokens],
    )
    del point["prompt_len"]  # the same for every point: kept once, at the top of sweep.json
    with_cache_s = sum(steps["with_cache_s"][:new_tokens])
    without_cache_s = sum(steps["without_cache_s"][:new_tokens])
    later = steps["with_cache_s"][1:new_tokens]
    return point | {
        "with_cache_s": with_cache_s,
        "without_cache_s": without_cache_s,
        "token_ratio": point["fed_without_cache"] / point["fed_with_cache"],
        "time_ratio": without_cache_s / with_cache_s,
        "decode_s_per_token": sum(later) / len(later) if later else None,
    }


def sweep(
    model,
    prompt_ids: list[int],
    lengths: list[int],
    warmup: int,
    runs: int,
    device,
    max_positions: int | None = None,
) -> dict:
    """sweep.json: cost against generation length after one prompt (see the module's docstring)."""
    if not lengths or min(lengths) < 1 or runs < 1:
        raise ValueError(f"lengths and runs must be positive, got {lengths} and {runs}")
    lengths = sorted(set(int(n) for n in lengths))
    prompt_len = len(prompt_ids)
    load_before = load_average()
    steps = measure_steps(
        model, prompt_ids, lengths[-1], warmup, runs, device, warmup_tokens=lengths[0]
    )
    load_after = load_average()
    points = [length_point(prompt_len, n, steps) for n in lengths]
    fit = fit_step_costs(prompt_len, steps)
    return {
        "prompt_len": prompt_len,
        "lengths": lengths,
        "longest": lengths[-1],
        "warmup": warmup,
        "runs": runs,
        "how": (
            f"one greedy generation of {lengths[-1]} tokens per method and run, every forward call "
            f"clocked; each length N is the sum of the first N steps; {warmup} warm-up generation(s) of "
            f"{lengths[0]} tokens per method first; the methods interleaved"
        ),
        "threads": torch.get_num_threads(),
        "load_before": load_before,
        "load_after": load_after,
        "points": points,
        "steps": steps,
        "ttft_s": steps["with_cache_s"][0],
        "decode_s_per_token": points[-1]["decode_s_per_token"],
        "fit": fit,
        "predictions": predict(fit, prompt_len, lengths[-1], max_positions),
    }


def nonnegative_least_squares(
    rows: list[list[float]], y: list[float]
) -> tuple[list[float], list[int]]:
    """min |A x - y|^2 with x >= 0, for a handful of columns: every subset of columns is solved by
    ordinary least squares (torch.linalg.lstsq, float64, columns scaled to unit length) and the best
    solution without a negative coefficient wins. Returns (x, indices of the columns held at zero)."""
    a = torch.tensor(rows, dtype=torch.float64)
    b = torch.tensor(y, dtype=torch.float64).unsqueeze(1)
    best, best_residual = None, None
    for size in range(a.shape[1], 0, -1):
        for subset in map(list, itertools.combinations(range(a.shape[1]), size)):
            norms = a[:, subset].norm(dim=0)
            if (norms == 0).any():
                continue
            solution = torch.linalg.lstsq(a[:, subset] / norms, b).solution.squeeze(1) / norms
            if (solution < 0).any():
                continue
            x = torch.zeros(a.shape[1], dtype=torch.float64)
            x[subset] = solution
            residual = float(((a @ x).unsqueeze(1) - b).square().sum())
            if best_residual is None or residual < best_residual - 1e-18:
                best, best_residual = x, residual
    return best.tolist(), [i for i in range(a.shape[1]) if best[i] == 0]


def fit_step_costs(prompt_len: int, steps: dict) -> dict:
    """The cost model, fitted over every step of both methods; adds each step's fitted time to
    ``steps`` (fitted_with_cache_s, fitted_without_cache_s, for the plot)."""
    rows, seconds, methods = [], [], []
    for method, cached in METHODS.items():
        for step, (fed, time_s) in enumerate(zip(steps[f"fed_{method}"], steps[f"{method}_s"])):
            rows.append(
                [
                    float(cached),
                    float(not cached),
                    float(fed),
                    float(attended_pairs(prompt_len, fed, step)),
                ]
            )
            seconds.append(time_s)
            methods.append(method)
    coefficients, held = nonnegative_least_squares(rows, seconds)
    predicted = [sum(c * x for c, x in zip(coefficients, row)) for row in rows]
    mean = sum(seconds) / len(seconds)
    ss_res = sum((t - p) ** 2 for t, p in zip(seconds, predicted))
    ss_tot = sum((t - mean) ** 2 for t in seconds)
    relative = {}
    for method in METHODS:
        steps[f"fitted_{method}_s"] = [p for p, m in zip(predicted, methods) if m == method]
        relative[method] = statistics.median(
            abs(t - p) / t for t, p, m in zip(seconds, predicted, methods) if m == method and t > 0
        )
    longest = len(steps["fed_with_cache"])
    return {
        "model": COST_MODEL,
        "method": "least squares over every step of both methods, coefficients held non-negative",
        **dict(zip(TERMS, coefficients)),
        "held_at_zero": [TERMS[i] for i in held],
        "r2": 1.0 - ss_res / ss_tot if ss_tot > 0 else None,
        "median_relative_residual": relative,
        "holds": all(value <= HOLDS_WITHIN for value in relative.values()),
        "measured_new_tokens": [1, longest],
        "measured_context": [prompt_len, prompt_len + longest - 1],
        "steps": len(seconds),
    }


def predicted_seconds(fit: dict, prompt_len: int, new_tokens: int, use_cache: bool) -> float:
    """The fitted time of an N-token generation: the sum of its steps' fitted times."""
    total = 0.0
    for step in range(new_tokens):
        fed = 1 if use_cache and step > 0 else prompt_len + (0 if use_cache else step)
        fixed = fit["fixed_s_with_cache"] if use_cache else fit["fixed_s_without_cache"]
        total += (
            fixed
            + fit["per_token_s"] * fed
            + fit["per_pair_s"] * attended_pairs(prompt_len, fed, step)
        )
    return total


def predict(fit: dict, prompt_len: int, longest: int, max_positions: int | None) -> list[dict]:
    """Times and ratios the fit predicts at N = 1, 2, 4, ... up to EXTRAPOLATE_UP_TO x the longest measured
    length, never past the longest generation the model can run after this prompt; each row says
    whether N was measured or is an extrapolation."""
    largest = EXTRAPOLATE_UP_TO * longest
    if max_positions is not None:
        largest = min(largest, max_positions - prompt_len)
    rows = []
    grid = {2**k for k in range(20)} | {longest, largest}
    for n in sorted(n for n in grid if 1 <= n <= largest):  # never past what the model can run
        with_cache_s = predicted_seconds(fit, prompt_len, n, True)
        without_cache_s = predicted_seconds(fit, prompt_len, n, False)
        rows.append(
            {
                "new_tokens": n,
                "measured": n <= longest,
                "with_cache_s": with_cache_s,
                "without_cache_s": without_cache_s,
                "time_ratio": without_cache_s / with_cache_s if with_cache_s > 0 else None,
                "token_ratio": fed_without_cache_formula(prompt_len, n)
                / fed_with_cache_formula(prompt_len, n),
                "fixed_share_with_cache": n * fit["fixed_s_with_cache"] / with_cache_s
                if with_cache_s > 0
                else None,
            }
        )
    return rows
