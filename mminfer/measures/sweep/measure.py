"""Beyond the task: what the cache saves as the generation gets longer, in tokens and in time.

Greedy generation is deterministic, so the first N steps of a long generation are the N-token
generation: the time of N tokens is the sum of the first N steps' times.

- **With the cache**, one clocked generation of the longest length gives every step.
- **Without the cache**, step i is one forward over the first P + i tokens of that same generation
  (greedy picks the same ids either way: same.json shows it). A generation of the first
  ``all_steps_up_to`` tokens is clocked at every step; beyond it, only ``spread_steps`` steps
  spread evenly up to the longest are clocked, each as a one-token uncached generation from the
  cached generation's first P + i tokens: the forward the uncached loop runs at step i, at a
  fraction of the loop's cost. The other uncached steps' times come from the fit below where it
  holds, otherwise by interpolation along the steps between the clocked steps either side, and
  sweep.json marks them (``None`` in ``steps.without_cache_s``, their source in
  ``steps.without_cache_how``), so that every length keeps a time.

``runs`` generations per method, interleaved: each step's time is the median over the runs, its
range the fastest and slowest; the spread of the runs, the spread of the steps within each run
(around their trend, as a step grows with the context) and a verdict follow the time job's rule
(mminfer.records.spread.verdict_of).

One cost model, ``step_s = fixed_s[method] + per_token_s x fed + per_pair_s x attended_pairs``,
is fitted by least squares over every clocked step of both methods: a fixed cost per step for each
method (Python, kernel launches, one read of every weight; the methods run different attention
code), the linear layers' work per token, and attention's work per (query, key) pair under the
causal mask, the quadratic term that slows every uncached step. Coefficients are held
non-negative (a negative cost is a fitting artefact, never a finding); predictions stop at
EXTRAPOLATE_UP_TO x the measured length and at max_position_embeddings.
"""

from __future__ import annotations

import itertools
import statistics
from dataclasses import dataclass

import torch

from mminfer.measures.sweep.sweep import (
    Prediction,
    StepFit,
    Sweep,
    SweepPoint,
    SweepSteps,
    run_sums,
    steady_step,
    step_runs,
)
from mminfer.model.counting import (
    ForwardRecorder,
    fed_with_cache_formula,
    fed_without_cache_formula,
)
from mminfer.model.generation import greedy_generate
from mminfer.records import RunInfo
from mminfer.records.interval import median_interval, ratio_interval
from mminfer.records.spread import (
    NOISY_CV,
    STEP_NOISY_CV,
    coefficient_of_variation,
    cv_within_runs,
    verdict_of,
)
from mminfer.timing.ab import alternate
from mminfer.timing.clock import clock_name, device_clock
from mminfer.timing.fit import nonnegative_least_squares
from mminfer.timing.machine import ContentionMeter, load_average


@dataclass(frozen=True)
class SweepSettings:
    """What the sweep rule measures: config section ``sweep`` (its keys are these fields)."""

    lengths: list[int]  # generation lengths reported, all read off one generation of the longest
    warmup: int  # untimed two-token generations per method first
    runs: int  # timed generations per method at the longest length
    all_steps_up_to: int  # without the cache, every step of the first this-many tokens is clocked
    spread_steps: int  # beyond that, this many uncached steps spread up to the longest


COST_MODEL = "step_s = fixed_s[method] + per_token_s x fed + per_pair_s x attended_pairs"
TERMS = ["fixed_s_with_cache", "fixed_s_without_cache", "per_token_s", "per_pair_s"]
METHODS = {"with_cache": True, "without_cache": False}
CONTRADICTIONS = ("cache_not_faster",)  # the cache side not faster at the longest length
HOLDS_WITHIN = 0.25  # the fit "holds" where its median relative residual per method is below this
EXTRAPOLATE_UP_TO = 4
WARMUP_TOKENS = 2  # a warm-up runs the prefill and one decode step: every kernel the steps use


# --- measuring -----------------------------------------------------------------------------------


def clocked_generation(model, prompt_ids: list[int], new_tokens: int, use_cache: bool, device):
    """One greedy generation, clocked: (seconds of each step, tokens fed at each step, new ids).

    A step runs from the start of its forward call to the start of the next (the last: until
    generate returns), so it includes generate's own work between the calls.
    """
    clock = device_clock(device)
    recorder = ForwardRecorder(clock=clock)
    new_ids = greedy_generate(
        model=model,
        prompt_ids=prompt_ids,
        new_tokens=new_tokens,
        use_cache=use_cache,
        device=device,
        recorder=recorder,
    )
    seconds = recorder.step_seconds(clock())
    return seconds, recorder.fed_per_call, new_ids


def spread_steps(first: int, last: int, count: int) -> list[int]:
    """``count`` step indices spread evenly from ``first`` to ``last`` (both included)."""
    if count <= 0 or first > last:
        return []
    if count == 1:
        return [last]
    span = last - first
    return sorted({first + round(k * span / (count - 1)) for k in range(count)})


def measure_steps(
    model,
    prompt_ids: list[int],
    longest: int,
    all_steps_up_to: int,
    spread: int,
    warmup: int,
    runs: int,
    device,
) -> dict:
    """Per-step seconds and tokens fed of both methods, in mminfer.measures.time.measure's order.

    Short warm-ups of both, then ``runs`` rounds of (with cache, without cache). Without the cache:
    every step of the first ``all_steps_up_to`` tokens, then the ``spread`` steps of
    :func:`spread_steps` up to the last one; ``None`` marks a step not clocked. With several runs
    each step's time is the median over them. ``uncached_ids_match``: every uncached step picked the
    token the cached generation picked.
    """
    short = min(all_steps_up_to, longest)
    later = spread_steps(short, longest - 1, spread)
    cached_ids: list[int] = []
    ids_match = True

    def with_cache():
        seconds, fed, ids = clocked_generation(model, prompt_ids, longest, True, device)
        cached_ids[:] = ids
        return seconds, fed

    def without_cache():
        nonlocal ids_match
        seconds, fed, ids = clocked_generation(model, prompt_ids, short, False, device)
        ids_match &= ids == cached_ids[:short]
        step_seconds = seconds + [None] * (longest - short)
        step_fed = fed + [None] * (longest - short)
        for step in later:
            context = prompt_ids + cached_ids[:step]  # the first P + step tokens
            one, fed_one, picked = clocked_generation(model, context, 1, False, device)
            step_seconds[step] = one[0]
            step_fed[step] = fed_one[0]
            ids_match &= picked == cached_ids[step : step + 1]
        return step_seconds, step_fed

    def warm(use_cache: bool):
        clocked_generation(model, prompt_ids, WARMUP_TOKENS, use_cache, device)

    def measure(use_cache: bool):
        return with_cache() if use_cache else without_cache()

    load_before = load_average()
    alternate(warm, warmup)
    meter = ContentionMeter(device, device_clock(device), load_before)
    measured = alternate(measure, runs)  # (step seconds, fed per step) of each run
    steps = {"uncached_ids_match": ids_match, "contention": meter.read()}
    for method, use_cache in METHODS.items():
        runs_of = measured[use_cache]
        per_step = list(zip(*(seconds for seconds, _ in runs_of)))
        steps[f"{method}_s"] = [summary_or_none(statistics.median, v) for v in per_step]
        steps[f"{method}_low_s"] = [summary_or_none(min, v) for v in per_step]
        steps[f"{method}_high_s"] = [summary_or_none(max, v) for v in per_step]
        steps[f"fed_{method}"] = list(runs_of[0][1])
        steps[f"{method}_runs_s"] = [run_total(seconds) for seconds, _ in runs_of]
        every_run = [seconds for seconds, _ in runs_of]
        steps[f"{method}_each_run_s"] = every_run
        steps[f"{method}_cv_within_runs"] = spread_within_runs(every_run, use_cache, short)
    return steps


def spread_within_runs(runs: list[list[float | None]], use_cache: bool, short: int) -> float:
    """The spread of one method's consecutive clocked steps within each run, around their trend
    (mminfer.records.spread.cv_within_runs): with the cache every decode step (the prefill left
    out),
    without it the first ``short`` steps (each clocked; the spread ones beyond lie far apart)."""
    if use_cache:
        consecutive = [seconds[1:] for seconds in runs]
    else:
        consecutive = [seconds[:short] for seconds in runs]
    return cv_within_runs(consecutive)


def summary_or_none(summary, values) -> float | None:
    """``summary`` (median, min, max) of a step's runs, or None for a step that was not clocked."""
    if values[0] is None:
        return None
    return summary(values)


def run_total(seconds: list[float | None]) -> float:
    """One run's clocked steps, added up: the figure whose spread over the runs is judged."""
    return sum(value for value in seconds if value is not None)


def spread_doubts(steps: dict, runs: int, longest_ratio: float | None) -> list[str]:
    """Why the sweep's clocked steps cannot be taken at face value (empty when they can).

    The time job's doubts on the runs (each run: its clocked steps' sum): a spread over NOISY_CV
    per method, the cache side not faster at the longest length; and one run, whose spread is
    unknown. Then, per method, a spread over NOISY_CV of the steps within the runs around their
    trend (:func:`spread_within_runs`): a steady busy loop slows every run alike, so that the runs
    agree while the steps inside each jump about.
    """
    doubts = []
    if longest_ratio is not None and longest_ratio <= 1:
        doubts.append("cache_not_faster")
    if runs < 2:
        doubts.append("single_run")
    if coefficient_of_variation(steps["with_cache_runs_s"]) > NOISY_CV:
        doubts.append("with_cache_spread")
    if coefficient_of_variation(steps["without_cache_runs_s"]) > NOISY_CV:
        doubts.append("without_cache_spread")
    if steps["with_cache_cv_within_runs"] > STEP_NOISY_CV:
        doubts.append("with_cache_spread_within_runs")
    if steps["without_cache_cv_within_runs"] > STEP_NOISY_CV:
        doubts.append("without_cache_spread_within_runs")
    return doubts


def interpolated(seconds: list[float | None], steady: list[bool] | None = None) -> list:
    """Each step not clocked (None) on the straight line between the clocked steps either side,
    where both are ``steady`` (their runs agree: sweep.steady_step; all, where not given).

    Steps before the first or after the last clocked step stay None: that would be extrapolation;
    so do the steps beside a clocked step whose runs are noisy or hold an outlier.
    """
    clocked = [step for step, value in enumerate(seconds) if value is not None]
    filled = list(seconds)
    for left, right in itertools.pairwise(clocked):
        if steady is not None and not (steady[left] and steady[right]):
            continue
        for step in range(left + 1, right):
            share = (step - left) / (right - left)
            filled[step] = seconds[left] + share * (seconds[right] - seconds[left])
    return filled


def filled_steps(
    measured: list[float | None],
    fitted: list[float],
    fit_holds: bool,
    steady: list[bool] | None = None,
):
    """(every uncached step's time, where each comes from): clocked; else the fit's where the fit
    holds; else interpolated between steady clocked steps; else None ("none")."""
    between = interpolated(measured, steady)
    times, how = [], []
    for clocked, fit_s, line_s in zip(measured, fitted, between):
        if clocked is not None:
            times.append(clocked)
            how.append("clocked")
        elif fit_holds:
            times.append(fit_s)
            how.append("fit")
        elif line_s is not None:
            times.append(line_s)
            how.append("interpolation")
        else:
            times.append(None)
            how.append("none")
    return times, how


# --- fitting -------------------------------------------------------------------------------------


def attended_pairs(prompt_len: int, fed: int, step: int) -> int:
    """(query, key) pairs under the causal mask at ``step``.

    The step feeds ``fed`` tokens and ends with P + step tokens in context: P (P + 1) / 2 for the
    prefill, P + i for a cached step, (P + i)(P + i + 1) / 2 for an uncached one.
    """
    context = prompt_len + step
    return fed * context - fed * (fed - 1) // 2


def fed_at_step(prompt_len: int, step: int, use_cache: bool) -> int:
    """What generate feeds at ``step``: the prompt first, then 1 with the cache, P + i without."""
    if not use_cache:
        return prompt_len + step
    if step == 0:
        return prompt_len
    return 1


def cost_terms(prompt_len: int, step: int, fed: int, use_cache: bool) -> list[float]:
    """One step's row of the cost model: [with cache?, without cache?, fed, attended pairs]."""
    return [
        float(use_cache),
        float(not use_cache),
        float(fed),
        float(attended_pairs(prompt_len, fed, step)),
    ]


def fit_step_costs(prompt_len: int, steps: dict) -> StepFit:
    """The cost model, fitted over every clocked step of both methods (``None`` steps left out)."""
    rows, seconds, methods = [], [], []
    for method, use_cache in METHODS.items():
        for step, (fed, time_s) in enumerate(zip(steps[f"fed_{method}"], steps[f"{method}_s"])):
            if time_s is None:
                continue
            rows.append(cost_terms(prompt_len, step, fed, use_cache))
            seconds.append(time_s)
            methods.append(method)
    coefficients, held = nonnegative_least_squares(rows, seconds)
    predicted = [sum(c * x for c, x in zip(coefficients, row)) for row in rows]
    mean = sum(seconds) / len(seconds)
    ss_res = sum((t - p) ** 2 for t, p in zip(seconds, predicted))
    ss_tot = sum((t - mean) ** 2 for t in seconds)
    relative = {}
    for method in METHODS:
        errors = [
            abs(t - p) / t for t, p, m in zip(seconds, predicted, methods) if m == method and t > 0
        ]
        relative[method] = statistics.median(errors)
    longest = len(steps["fed_with_cache"])
    costs = dict(zip(TERMS, coefficients))
    return StepFit(
        model=COST_MODEL,
        method="least squares over every clocked step of both methods, coefficients held >= 0",
        fixed_s_with_cache=costs["fixed_s_with_cache"],
        fixed_s_without_cache=costs["fixed_s_without_cache"],
        per_token_s=costs["per_token_s"],
        per_pair_s=costs["per_pair_s"],
        held_at_zero=[TERMS[i] for i in held],
        r2=1.0 - ss_res / ss_tot if ss_tot > 0 else None,
        median_relative_residual=relative,
        holds=all(value <= HOLDS_WITHIN for value in relative.values()),
        measured_new_tokens=[1, longest],
        measured_context=[prompt_len, prompt_len + longest - 1],
        steps=len(seconds),
    )


def fitted_step_seconds(fit: StepFit, prompt_len: int, step: int, use_cache: bool) -> float:
    """The fit's time of one step of an N-token generation."""
    fed = fed_at_step(prompt_len, step, use_cache)
    if use_cache:
        fixed = fit.fixed_s_with_cache
    else:
        fixed = fit.fixed_s_without_cache
    pairs = attended_pairs(prompt_len, fed, step)
    return fixed + fit.per_token_s * fed + fit.per_pair_s * pairs


def predicted_seconds(fit: StepFit, prompt_len: int, new_tokens: int, use_cache: bool) -> float:
    """The fitted time of an N-token generation: the sum of its steps' fitted times."""
    return sum(fitted_step_seconds(fit, prompt_len, step, use_cache) for step in range(new_tokens))


def predict(
    fit: StepFit, prompt_len: int, longest: int, max_positions: int | None
) -> list[Prediction]:
    """Times and ratios the fit predicts at N = 1, 2, 4 and onwards.

    Up to EXTRAPOLATE_UP_TO x the longest measured length, never past the longest generation the
    model can run after this prompt; each row says whether N was measured or is an extrapolation.
    """
    largest = EXTRAPOLATE_UP_TO * longest
    if max_positions is not None:
        largest = min(largest, max_positions - prompt_len)
    grid = {2**k for k in range(20)} | {longest, largest}
    rows = []
    for n in sorted(n for n in grid if 1 <= n <= largest):  # never past what the model can run
        with_cache_s = predicted_seconds(fit, prompt_len, n, True)
        without_cache_s = predicted_seconds(fit, prompt_len, n, False)
        token_ratio = fed_without_cache_formula(prompt_len, n) / fed_with_cache_formula(
            prompt_len, n
        )
        if with_cache_s > 0:
            time_ratio = without_cache_s / with_cache_s
            fixed_share = n * fit.fixed_s_with_cache / with_cache_s
        else:
            time_ratio = None
            fixed_share = None
        prediction = Prediction(
            new_tokens=n,
            measured=n <= longest,
            with_cache_s=with_cache_s,
            without_cache_s=without_cache_s,
            time_ratio=time_ratio,
            token_ratio=token_ratio,
            fixed_share_with_cache=fixed_share,
        )
        rows.append(prediction)
    return rows


# --- the record ----------------------------------------------------------------------------------


def length_point(prompt_len: int, new_tokens: int, steps: SweepSteps) -> SweepPoint:
    """Counts, formulas and times of the first ``new_tokens`` steps: the N-token generation.

    An uncached step that was not clocked counts with its filled time (``filled_without_cache_s``:
    the fit's, or interpolated); where one has none, the uncached time and the time ratio are None.
    """
    fed_with = steps.fed_with_cache[:new_tokens]
    fed_without = steps.fed_without_cache[:new_tokens]
    clocked_without = [fed for fed in fed_without if fed is not None]
    formula_without = fed_without_cache_formula(prompt_len, new_tokens)
    if len(clocked_without) == new_tokens:
        measured_without = sum(clocked_without)
    else:
        measured_without = None  # not every step ran: the formula stands in
    filled = steps.filled_without_cache_s[:new_tokens]
    sources = steps.without_cache_how[:new_tokens]
    if "none" in sources:
        without_cache_s = None
        source = "none"
    else:
        without_cache_s = sum(filled)
        source = "clocked"
        for how in ("fit", "interpolation"):
            if how in sources:
                source = how
    with_cache_s = sum(steps.with_cache_s[:new_tokens])
    with_sums = run_sums(steps.with_cache_runs_s, steps.with_cache_s, new_tokens)
    without_sums = run_sums(steps.without_cache_runs_s, filled, new_tokens)
    without_cache_interval = None
    time_ratio_interval = None
    if without_sums is not None:
        without_cache_interval = median_interval(without_sums)
        time_ratio_interval = ratio_interval(without_sums, with_sums)
    later = steps.with_cache_s[1:new_tokens]
    fed_with_cache = sum(fed_with)
    if measured_without is None:
        known_without = formula_without
    else:
        known_without = measured_without
    return SweepPoint(
        new_tokens=new_tokens,
        fed_with_cache=fed_with_cache,
        fed_without_cache=measured_without,
        formula_with_cache=fed_with_cache_formula(prompt_len, new_tokens),
        formula_without_cache=formula_without,
        clocked_with_cache=len(fed_with),
        clocked_without_cache=len(clocked_without),
        with_cache_s=with_cache_s,
        without_cache_s=without_cache_s,
        without_cache_from=source,
        token_ratio=known_without / fed_with_cache,
        time_ratio=None if without_cache_s is None else without_cache_s / with_cache_s,
        decode_s_per_token=sum(later) / len(later) if later else None,
        with_cache_interval=median_interval(with_sums),
        without_cache_interval=without_cache_interval,
        time_ratio_interval=time_ratio_interval,
    )


def sweep(
    *,
    model,
    prompt_ids: list[int],
    settings: SweepSettings,
    device,
    run: RunInfo,
    max_positions: int | None = None,
) -> Sweep:
    """sweep.json: cost against generation length after one prompt (see the module's docstring)."""
    lengths = settings.lengths
    warmup = settings.warmup
    runs = settings.runs
    all_steps_up_to = settings.all_steps_up_to
    spread = settings.spread_steps
    if not lengths or min(lengths) < 1 or runs < 1:
        raise ValueError(f"lengths and runs must be positive, got {lengths} and {runs}")
    lengths = sorted({int(n) for n in lengths})
    longest = lengths[-1]
    prompt_len = len(prompt_ids)
    load_before = load_average()
    measured = measure_steps(
        model, prompt_ids, longest, all_steps_up_to, spread, warmup, runs, device
    )
    load_after = load_average()
    fit = fit_step_costs(prompt_len, measured)
    fitted_without = [fitted_step_seconds(fit, prompt_len, step, False) for step in range(longest)]
    uncached_runs = measured["without_cache_each_run_s"]
    steady = [
        seconds is not None and steady_step(step_runs(uncached_runs, step), STEP_NOISY_CV)
        for step, seconds in enumerate(measured["without_cache_s"])
    ]
    filled, filled_how = filled_steps(
        measured["without_cache_s"], fitted_without, fit.holds, steady
    )
    steps = SweepSteps(
        with_cache_s=measured["with_cache_s"],
        fed_with_cache=measured["fed_with_cache"],
        without_cache_s=measured["without_cache_s"],
        fed_without_cache=measured["fed_without_cache"],
        fitted_with_cache_s=[
            fitted_step_seconds(fit, prompt_len, step, True) for step in range(longest)
        ],
        fitted_without_cache_s=fitted_without,
        with_cache_low_s=measured["with_cache_low_s"],
        with_cache_high_s=measured["with_cache_high_s"],
        without_cache_low_s=measured["without_cache_low_s"],
        without_cache_high_s=measured["without_cache_high_s"],
        filled_without_cache_s=filled,
        without_cache_how=filled_how,
        with_cache_runs_s=measured["with_cache_each_run_s"],
        without_cache_runs_s=uncached_runs,
        without_cache_steady=steady,
    )
    points = [length_point(prompt_len, n, steps) for n in lengths]
    longest_ratio = None
    if points[-1].new_tokens > 1:
        longest_ratio = points[-1].time_ratio
    doubts = spread_doubts(measured, runs, longest_ratio)
    clocked = sum(seconds is not None for seconds in steps.without_cache_s)
    last_clocked_step = max(
        i for i, seconds in enumerate(steps.without_cache_s) if seconds is not None
    )
    how = (
        f"with the cache: one greedy generation of {longest} tokens per run, every forward call "
        f"clocked; without: every step of the first {min(all_steps_up_to, longest)} tokens and "
        f"{clocked - min(all_steps_up_to, longest)} steps spread up to the last, each a one-token "
        f"generation from the cached generation's first P + i tokens, the rest from the fit where "
        f"it holds, else interpolated between steady clocked steps; each step the median of {runs} "
        f"run(s); each "
        f"length N is the sum of the first N steps; {warmup} warm-up(s) of {WARMUP_TOKENS} tokens "
        "per method first; the methods interleaved"
    )
    return Sweep(
        prompt_len=prompt_len,
        lengths=lengths,
        longest=longest,
        warmup=warmup,
        runs=runs,
        all_steps_up_to=all_steps_up_to,
        spread_steps=spread,
        how=how,
        threads=torch.get_num_threads(),
        load_before=load_before,
        load_after=load_after,
        clock=clock_name(),
        cv_with_cache=coefficient_of_variation(measured["with_cache_runs_s"]),
        cv_without_cache=coefficient_of_variation(measured["without_cache_runs_s"]),
        cv_with_cache_within_runs=measured["with_cache_cv_within_runs"],
        cv_without_cache_within_runs=measured["without_cache_cv_within_runs"],
        noisy_cv=NOISY_CV,
        step_noisy_cv=STEP_NOISY_CV,
        doubts=doubts,
        verdict=verdict_of(doubts, CONTRADICTIONS),
        points=points,
        steps=steps,
        uncached_ids_match=measured["uncached_ids_match"],
        ttft_s=steps.with_cache_s[0],
        ttft_interval=median_interval(step_runs(steps.with_cache_runs_s, 0)),
        uncached_first_interval=median_interval(step_runs(uncached_runs, 0)),
        uncached_growth_interval=ratio_interval(
            step_runs(uncached_runs, last_clocked_step), step_runs(uncached_runs, 0)
        ),
        contention=measured["contention"],
        decode_s_per_token=points[-1].decode_s_per_token,
        fit=fit,
        predictions=predict(fit, prompt_len, longest, max_positions),
        run=run,
    )
