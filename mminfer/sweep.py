"""Beyond the task: what the cache saves as the generation gets longer, in tokens and in time.

Greedy generation is deterministic, so the first N steps of an L-token generation are the N-token
generation. One generation per method at the longest length L, with a clock read at the start of
every ``forward`` call (a :class:`~mminfer.counting.ForwardRecorder` with a clock), gives every
length at once:

    step_s[i]          = start of forward call i+1 - start of call i (the last step: until generate returns)
    time(N)            = step_s[0] + ... + step_s[N-1]
    fed(N)             = fed[0] + ... + fed[N-1]       (counted; and by the formulas of mminfer.counting)
    ttft_s             = the cached generation's first step: the prefill of the whole prompt
    decode_s_per_token = the cached generation's later steps, on average

Each step is then explained by one cost model, fitted over every step of both methods at once:

    step_s = fixed_s[method] + per_token_s x fed + per_pair_s x attended_pairs

- fixed_s: what a step costs whatever it feeds (Python, the generate loop, one launch per kernel, one
  read of every weight). The cached step runs other code than the uncached one (a one-token explicit
  softmax against the cache; fused attention over the whole sequence), so each method has its own.
- per_token_s: the linear layers' work per token fed, the same for both methods.
- per_pair_s: attention's work per (query, key) pair under the causal mask, the same for both: step i
  of the cached generation attends P + i pairs (the prefill P (P + 1) / 2), step i of the uncached
  one (P + i)(P + i + 1) / 2 — the quadratic term that makes the uncached path slow down step by step.

The coefficients are kept non-negative (a negative cost is a fitting artefact, never a finding), and
the fit states the range of lengths it was measured on; predictions beyond it are marked as such and
never pass the model's max_position_embeddings.
"""

from __future__ import annotations

import itertools
import statistics

import torch

from mminfer.counting import ForwardRecorder, fed_counts, fed_with_cache_formula, fed_without_cache_formula
from mminfer.greedy import greedy_generate
from mminfer.timing import load_average, synced_clock

COST_MODEL = "step_s = fixed_s[method] + per_token_s x fed + per_pair_s x attended_pairs"
METHODS = {"with_cache": True, "without_cache": False}
HOLDS_WITHIN = 0.25  # the fit "holds" where its median relative residual per method is below this


# --- measuring -------------------------------------------------------------------------------------

def timed_generation(model, prompt_ids: list[int], new_tokens: int, use_cache: bool, device) -> ForwardRecorder:
    """One greedy generation with a clocked recorder: tokens fed and start time of every forward call,
    and ``finished`` (the clock when generate returned)."""
    clock = synced_clock(device)
    recorder = ForwardRecorder(clock=clock)
    greedy_generate(model, prompt_ids, new_tokens, use_cache, device, recorder)
    recorder.finished = clock()
    return recorder


def step_seconds(recorder: ForwardRecorder) -> list[float]:
    """Each step's time: from the start of its forward call to the start of the next (the last step
    ends when generate returns), so a step includes generate's own work between the calls."""
    ends = recorder.started[1:] + [recorder.finished]
    return [end - start for start, end in zip(recorder.started, ends)]


def attended_pairs(prompt_len: int, fed: int, step: int) -> int:
    """(query, key) pairs attention computes at ``step`` under the causal mask, for a step that feeds
    ``fed`` tokens and ends with P + step tokens in context."""
    context = prompt_len + step
    return fed * context - fed * (fed - 1) // 2


def measure_steps(model, prompt_ids: list[int], longest: int, warmup: int, runs: int, device,
                  warmup_tokens: int) -> dict:
    """Per-step times of both methods, interleaved like :func:`mminfer.timing.interleaved_runs`:
    warm-ups of both (``warmup_tokens`` new tokens: first-call costs do not depend on the length),
    then ``runs`` rounds of (with cache, without cache) at ``longest``. With several runs each
    step's time is the median over the runs."""
    for _ in range(warmup):
        for use_cache in METHODS.values():
            timed_generation(model, prompt_ids, warmup_tokens, use_cache, device)
    recorders = {method: [] for method in METHODS}
    for _ in range(runs):
        for method, use_cache in METHODS.items():
            recorders[method].append(timed_generation(model, prompt_ids, longest, use_cache, device))
    steps = {}
    for method in METHODS:
        per_run = [step_seconds(recorder) for recorder in recorders[method]]
        steps[f"{method}_s"] = [statistics.median(values) for values in zip(*per_run)]
        steps[f"fed_{method}"] = list(recorders[method][0].fed_per_call)
    return steps


def length_point(prompt_len: int, new_tokens: int, steps: dict) -> dict:
    """Counts, formulas and times of the first ``new_tokens`` steps (= the N-token generation)."""
    with_cache = ForwardRecorder.from_counts(steps["fed_with_cache"][:new_tokens])
    without_cache = ForwardRecorder.from_counts(steps["fed_without_cache"][:new_tokens])
    point = fed_counts(prompt_len, new_tokens, with_cache, without_cache)
    del point["prompt_len"]  # the same for every point: kept once, at the top of sweep.json
    with_cache_s = sum(steps["with_cache_s"][:new_tokens])
    without_cache_s = sum(steps["without_cache_s"][:new_tokens])
    later = steps["with_cache_s"][1:new_tokens]
    return point | {
        "with_cache_s": with_cache_s,
        "without_cache_s": without_cache_s,
        "token_ratio": without_cache.fed / with_cache.fed,
        "time_ratio": without_cache_s / with_cache_s,
        "decode_s_per_token": sum(later) / len(later) if later else None,
    }


def sweep(model, prompt_ids: list[int], lengths: list[int], warmup: int, runs: int, device,
          max_positions: int | None = None) -> dict:
    """sweep.json: cost against generation length after one prompt, read off one generation per
    method at the longest length (see the module's docstring)."""
    if not lengths or min(lengths) < 1:
        raise ValueError(f"lengths must be positive integers, got {lengths}")
    if runs < 1:
        raise ValueError(f"runs must be at least 1, got {runs}")
    lengths = sorted(set(int(n) for n in lengths))
    prompt_len = len(prompt_ids)
    load_before = load_average()
    steps = measure_steps(model, prompt_ids, lengths[-1], warmup, runs, device, warmup_tokens=lengths[0])
    load_after = load_average()
    points = [length_point(prompt_len, n, steps) for n in lengths]
    fit = fit_step_costs(prompt_len, steps)
    return {
        "prompt_len": prompt_len,
        "lengths": lengths,
        "longest": lengths[-1],
        "warmup": warmup,
        "runs": runs,
        "how": (f"one greedy generation of {lengths[-1]} tokens per method and run, every forward call "
                f"clocked; each length N is the sum of the first N steps; {warmup} warm-up generation(s) of "
                f"{lengths[0]} tokens per method first; the methods interleaved"),
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


# --- fitting the step costs ----------------------------------------------------------------------------

TERMS = ["fixed_s_with_cache", "fixed_s_without_cache", "per_token_s", "per_pair_s"]


def design_rows(prompt_len: int, steps: dict) -> tuple[list[list[float]], list[float], list[str]]:
    """One row per step of both methods: [is cached, is uncached, fed, attended pairs]; its time; its method."""
    rows, seconds, methods = [], [], []
    for method in METHODS:
        for step, (fed, time_s) in enumerate(zip(steps[f"fed_{method}"], steps[f"{method}_s"])):
            cached = method == "with_cache"
            rows.append([float(cached), float(not cached), float(fed), float(attended_pairs(prompt_len, fed, step))])
            seconds.append(time_s)
            methods.append(method)
    return rows, seconds, methods


def nonnegative_least_squares(rows: list[list[float]], y: list[float]) -> tuple[list[float], list[int]]:
    """min |A x - y|^2 with x >= 0, for a handful of columns: every subset of columns is solved by
    ordinary least squares (torch.linalg.lstsq, float64, columns scaled to unit length) and the best
    solution without a negative coefficient wins. Returns (x, indices of the columns held at zero)."""
    a = torch.tensor(rows, dtype=torch.float64)
    b = torch.tensor(y, dtype=torch.float64).unsqueeze(1)
    columns = a.shape[1]
    best, best_residual = None, None
    for size in range(columns, 0, -1):
        for subset in itertools.combinations(range(columns), size):
            sub = a[:, list(subset)]
            norms = sub.norm(dim=0)
            if (norms == 0).any():
                continue
            solution = torch.linalg.lstsq(sub / norms, b).solution.squeeze(1) / norms
            if (solution < 0).any():
                continue
            x = torch.zeros(columns, dtype=torch.float64)
            x[list(subset)] = solution
            residual = float(((a @ x).unsqueeze(1) - b).square().sum())
            if best_residual is None or residual < best_residual - 1e-18:
                best, best_residual = x, residual
    return best.tolist(), [i for i in range(columns) if best[i] == 0]


def fit_step_costs(prompt_len: int, steps: dict) -> dict:
    """The cost model of the module's docstring, fitted over every step of both methods; adds each
    step's fitted time to ``steps`` (fitted_with_cache_s, fitted_without_cache_s)."""
    rows, seconds, methods = design_rows(prompt_len, steps)
    coefficients, dropped = nonnegative_least_squares(rows, seconds)
    predicted = [sum(c * x for c, x in zip(coefficients, row)) for row in rows]
    for method in METHODS:  # the fitted time of every step, beside the measured one (for the plot)
        steps[f"fitted_{method}_s"] = [p for p, m in zip(predicted, methods) if m == method]
    mean = sum(seconds) / len(seconds)
    ss_res = sum((t - p) ** 2 for t, p in zip(seconds, predicted))
    ss_tot = sum((t - mean) ** 2 for t in seconds)
    relative = {method: statistics.median(abs(t - p) / t for t, p, m in zip(seconds, predicted, methods)
                                          if m == method and t > 0)
                for method in METHODS}
    longest = len(steps["fed_with_cache"])
    return {
        "model": COST_MODEL,
        "method": "least squares over every step of both methods, coefficients held non-negative",
        **dict(zip(TERMS, coefficients)),
        "held_at_zero": [TERMS[i] for i in dropped],
        "r2": 1.0 - ss_res / ss_tot if ss_tot > 0 else None,
        "median_relative_residual": relative,
        "holds": all(value <= HOLDS_WITHIN for value in relative.values()),
        "measured_new_tokens": [1, longest],
        "measured_context": [prompt_len, prompt_len + longest - 1],
        "steps": len(seconds),
    }


# --- what the fit predicts -------------------------------------------------------------------------------

def pairs_of_generation(prompt_len: int, new_tokens: int, use_cache: bool) -> int:
    """:func:`attended_pairs` summed over the N steps of a generation, in closed form. With the cache:
    the prefill P (P + 1) / 2, then P + i for i = 1 .. N - 1. Without: (P + i)(P + i + 1) / 2 for
    i = 0 .. N - 1, a difference of two tetrahedral numbers n (n + 1)(n + 2) / 6."""
    p, n = prompt_len, new_tokens
    if use_cache:
        return p * (p + 1) // 2 + (n - 1) * p + (n - 1) * n // 2

    def tetrahedral(k: int) -> int:
        return k * (k + 1) * (k + 2) // 6

    return tetrahedral(p + n - 1) - tetrahedral(p - 1)


def predicted_seconds(fit: dict, prompt_len: int, new_tokens: int, use_cache: bool) -> float:
    """The fitted time of an N-token generation: the sum of its steps' predicted times."""
    if use_cache:
        fixed, fed = fit["fixed_s_with_cache"], fed_with_cache_formula(prompt_len, new_tokens)
    else:
        fixed, fed = fit["fixed_s_without_cache"], fed_without_cache_formula(prompt_len, new_tokens)
    pairs = pairs_of_generation(prompt_len, new_tokens, use_cache)
    return new_tokens * fixed + fit["per_token_s"] * fed + fit["per_pair_s"] * pairs


EXTRAPOLATE_UP_TO = 4  # predictions reach at most this many times the longest measured length


def predict(fit: dict, prompt_len: int, longest: int, max_positions: int | None) -> list[dict]:
    """Predicted times and ratios at N = 1, 2, 4, ... up to EXTRAPOLATE_UP_TO x the longest measured
    length, and never past the longest generation the model can run after this prompt
    (max_positions - P); each row says whether N was measured or is an extrapolation."""
    largest = EXTRAPOLATE_UP_TO * longest
    if max_positions is not None:
        largest = min(largest, max_positions - prompt_len)
    grid = sorted({2 ** k for k in range(20) if 2 ** k <= largest} | {longest, largest})
    rows = []
    for n in (n for n in grid if 1 <= n <= largest):
        with_cache_s = predicted_seconds(fit, prompt_len, n, True)
        without_cache_s = predicted_seconds(fit, prompt_len, n, False)
        fed_with = fed_with_cache_formula(prompt_len, n)
        fed_without = fed_without_cache_formula(prompt_len, n)
        rows.append({
            "new_tokens": n,
            "measured": n <= longest,
            "with_cache_s": with_cache_s,
            "without_cache_s": without_cache_s,
            "time_ratio": without_cache_s / with_cache_s if with_cache_s > 0 else None,
            "token_ratio": fed_without / fed_with,
            "fixed_share_with_cache": n * fit["fixed_s_with_cache"] / with_cache_s if with_cache_s > 0 else None,
        })
    return rows
