"""Beyond the task: what one machine serves, by memory and by speed.

A server fills a device by batching: B users decode together, one step giving each of them a
token. A cached decode step of a small model carries a fixed cost (Python, kernel launches, one
read of every weight) that the batch shares, so batching raises tokens per second until the
batch's own work dominates; on a GPU a step can stay nearly flat for a while, on a CPU the batch's
matmuls can grow from the first doubling. How far batching pays is what this measures.

Here the task's prompt is decoded B times through the model's own generate (greedy, with the
cache) at each batch size, every decode step clocked, in ``passes`` passes
interleaved across the batch sizes (up, then down, ...) so that drift hits every batch alike: each
batch's spread over the passes, the spread of its steps within the passes (around their trend: the
context grows a token a step) and its verdict follow the time job's rule. The users share the
prompt's cache (one prefill, repeated for every user, as a shared system prompt would be), and
each continues from another of the prompt's most likely next tokens, so that their sequences
differ from there on. Per batch: the median decode step, tokens per second (B / step), the
batch's KV bytes (measured, against the formula), for a MoE model how many experts a decode step
touches, and up to ``prefill_up_to`` users the prefill of the whole batch, clocked on its own.

Then where tokens per second peak, from which batch a doubling stops raising them by
``growth_per_doubling``, the fit step(B) = fixed + per_sequence x B in relative error over the
batches where it holds, and every cliff (a step that grew faster than the batch) beside the memory
a step reads (the weights and the batch's KV cache as stored) and the caches the step's threads
hold together.

Two bounds then say how many users this machine takes at a per-user decode speed and context:

- by speed: the largest batch whose decode step is at most 1 / speed (measured; between two
  measured batches, the fit step(B) = fixed + per_sequence x B; never past the largest measured);
- by memory: capacity's arithmetic, floor(free / (KV bytes per token x context)), with the free
  memory this device has now (the weights are loaded already).

The smaller one binds. For the cards of capacity.json only the memory bound is known.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from mminfer.measures.serve.serve import BatchStep, CacheLevel, Cliff, Serve, ServeFit, UsersBound
from mminfer.model.cachebytes import (
    GIB,
    cache_tensor_bytes,
    config_formula_bytes,
    sequences_that_fit,
)
from mminfer.model.counting import ForwardRecorder
from mminfer.model.generation import GREEDY
from mminfer.records import RunInfo, rates
from mminfer.records.interval import median_interval
from mminfer.records.spread import (
    NOISY_CV,
    STEP_NOISY_CV,
    coefficient_of_variation,
    cv_within_runs,
    verdict_of,
)
from mminfer.timing.clock import clock_name, device_clock
from mminfer.timing.fit import nonnegative_least_squares
from mminfer.timing.machine import (
    ContentionMeter,
    available_bytes,
    device_caches,
    load_average,
)

NEARLY_FREE = 0.25  # a doubling of the batch is "nearly free" while the step grows less than this
HOLDS_WITHIN = 0.25  # the fit holds where every batch of its range is within this relative error
FIT_AT_LEAST = 3  # batches a fit's range needs before it claims to hold (two fit any line)
# A larger batch whose median is this much faster than a smaller one's contradicts physics (it does
# more work): the timing is "untrusted", as time.json's cache side that is not faster.
CONTRADICTIONS = ("decode_faster_than_smaller_batch", "prefill_faster_than_smaller_batch")
ORDER = "passes interleaved across the batch sizes: up, then down, then up ..."


@dataclass(frozen=True)
class ServeSettings:
    """What the serve rule measures: config section ``serve`` (its keys are these fields)."""

    batches: list[int]  # batch sizes decoded (those past memory_cap_gib are left out)
    decode_steps: int  # decode steps clocked per batch in each pass
    passes: int  # passes over every batch size, interleaved
    warmup: int  # untimed short generations at the smallest batch first
    prefill_up_to: int  # batches up to this size also clock their prefill
    memory_cap_gib: float  # the largest KV cache a measured batch may hold
    tokens_per_second: float  # each user's decode speed, for the users by speed
    context: int  # tokens each user's cache holds, for the users by memory
    growth_per_doubling: float  # tokens per second "stop growing" below this gain per doubling


# --- memory --------------------------------------------------------------------------------------


# --- experts of a MoE model ----------------------------------------------------------------------


class ExpertCounter:
    """Counts, for every forward call, the distinct experts each MoE layer routes to.

    A hook on each router (``mlp.gate``) recomputes the routing from its output; the model is
    untouched.
    """

    def __init__(self, model, experts_per_token: int):
        self.experts_per_token = experts_per_token
        self.per_call: list[int] = []  # distinct experts chosen, one count per router call
        self.handles = []
        for name, module in model.named_modules():
            if name.endswith("mlp.gate"):
                self.handles.append(module.register_forward_hook(self.count))

    def count(self, module, inputs, output):
        scores = torch.softmax(output, dim=-1)
        _, chosen = torch.topk(scores, k=self.experts_per_token, dim=-1, sorted=False)
        self.per_call.append(int(chosen.unique().numel()))

    def remove(self):
        for handle in self.handles:
            handle.remove()


# --- measuring -----------------------------------------------------------------------------------


@torch.inference_mode()
def prompt_start(model, prompt_ids: list[int], batches: int, device):
    """One user's prefill of the prompt: (its cache, the ``batches`` most likely next tokens).

    Every batch continues from this cache repeated for its users (a shared prompt), each user
    from another of these first tokens, so that the users' sequences differ from there on: a MoE
    model then routes them as it routes different users.
    """
    input_ids = torch.tensor([prompt_ids], dtype=torch.long, device=device)
    outputs = model(input_ids, use_cache=True)
    logits = outputs.logits[0, -1]
    first_tokens = torch.topk(logits, min(batches, logits.shape[-1])).indices.tolist()
    return outputs.past_key_values, first_tokens


def repeated(cache, batch: int):
    """A batch's cache of the shared prompt: one user's (K, V) per layer, ``batch`` times."""
    return [(k.repeat(batch, 1, 1, 1), v.repeat(batch, 1, 1, 1)) for k, v in cache]


def clocked_prefill(model, prompt_ids: list[int], batch: int, device) -> float:
    """The seconds of one prefill of ``batch`` copies of the prompt (batch x prompt tokens at
    once), through generate."""
    clock = device_clock(device)
    recorder = ForwardRecorder(clock=clock)
    input_ids = torch.tensor([prompt_ids], dtype=torch.long, device=device)
    with recorder.watching(model):
        model.generate(input_ids, max_new_tokens=1, num_return_sequences=batch, **GREEDY)
    return recorder.step_seconds(clock())[0]


def decode_batch(model, config, prompt_ids: list[int], batch: int, steps: int, device, start):
    """``steps`` clocked decode steps of ``batch`` users through generate (greedy, with the cache).

    The users share the prompt's cache (``start``, from :func:`prompt_start`) and each continues
    from its own first token. Returns (each decode step's seconds, the cache's measured bytes,
    the experts a decode step touches, averaged over the layers, or None for a dense model).
    """
    cache, first_tokens = start
    clock = device_clock(device)
    recorder = ForwardRecorder(clock=clock)
    counter = None
    if config.use_moe:
        counter = ExpertCounter(model, config.num_experts_per_tok)
    rows = [prompt_ids + [first_tokens[user % len(first_tokens)]] for user in range(batch)]
    input_ids = torch.tensor(rows, dtype=torch.long, device=device)
    try:
        with recorder.watching(model):
            output = model.generate(
                input_ids,
                max_new_tokens=steps,
                past_key_values=repeated(cache, batch),
                use_cache=True,
                return_kv=True,
                **GREEDY,
            )
    finally:
        if counter is not None:
            counter.remove()
    seconds = recorder.step_seconds(clock())
    experts = None
    if counter is not None:
        layers = config.num_hidden_layers
        per_step = []
        for call in range(len(seconds)):
            counts = counter.per_call[call * layers : (call + 1) * layers]
            per_step.append(sum(counts) / layers)
        experts = statistics.median(per_step)
    return seconds, cache_tensor_bytes(output["past_kv"]), experts


def batch_doubts(
    passes_s: list[list[float]], prefills_s: list[float] | None, smaller: BatchStep | None
) -> list[str]:
    """Why a batch's clocked figures cannot be taken at face value (empty when they can).

    A spread over NOISY_CV of the passes' median steps or prefills ("decode_spread",
    "prefill_spread"); of the steps within the passes around their trend (the median over the
    passes of mminfer.records.spread.cv_around_trend, "decode_spread_within_passes": a steady busy
    loop
    slows every pass alike, and only the steps jumping inside each pass show it); a single pass
    (no spread to judge); and, against the next smaller batch, a median step or prefill more than
    NOISY_CV faster: more work done faster contradicts physics (CONTRADICTIONS).
    """
    pass_step_s = [statistics.median(steps) for steps in passes_s]
    doubts = []
    if len(pass_step_s) < 2:
        doubts.append("single_pass")
    if coefficient_of_variation(pass_step_s) > NOISY_CV:
        doubts.append("decode_spread")
    if cv_within_runs(passes_s) > STEP_NOISY_CV:
        doubts.append("decode_spread_within_passes")
    if prefills_s is not None and coefficient_of_variation(prefills_s) > NOISY_CV:
        doubts.append("prefill_spread")
    if smaller is None:
        return doubts
    step_s = statistics.median(pass_step_s)
    if step_s < smaller.decode_step_s * (1 - NOISY_CV):
        doubts.append("decode_faster_than_smaller_batch")
    if prefills_s is None or smaller.prefill_s is None:
        return doubts
    if statistics.median(prefills_s) < smaller.prefill_s * (1 - NOISY_CV):
        doubts.append("prefill_faster_than_smaller_batch")
    return doubts


def batch_step(
    batch: int,
    passes_s: list[list[float]],
    prefills_s: list[float] | None,
    kv_bytes: int,
    formula_kv_bytes: int,
    experts: float | None,
    smaller: BatchStep | None,
) -> BatchStep:
    """One batch's row of serve.json from its clocked passes.

    ``passes_s``: each pass's decode steps (seconds); ``prefills_s``: each pass's prefill, or None
    past serve.prefill_up_to; ``smaller``: the row of the next smaller batch, for the doubts.
    """
    every_step = [seconds for steps in passes_s for seconds in steps]
    pass_step_s = [statistics.median(steps) for steps in passes_s]
    # one figure for the step, as its interval's median: the median of the passes' medians
    step_s = statistics.median(pass_step_s)
    prefill_s = None
    cv_prefill = None
    prefill_interval = None
    if prefills_s is not None:
        prefill_s = statistics.median(prefills_s)
        cv_prefill = coefficient_of_variation(prefills_s)
        prefill_interval = median_interval(prefills_s)
    doubts = batch_doubts(passes_s, prefills_s, smaller)
    return BatchStep(
        batch=batch,
        prefill_s=prefill_s,
        decode_step_s=step_s,
        decode_steps_s=every_step,
        prefills_s=prefills_s,
        pass_step_s=pass_step_s,
        decode_step_interval=median_interval(pass_step_s),
        prefill_interval=prefill_interval,
        step_low_s=min(pass_step_s),
        step_high_s=max(pass_step_s),
        cv_decode_step=coefficient_of_variation(pass_step_s),
        cv_within_passes=cv_within_runs(passes_s),
        cv_prefill=cv_prefill,
        doubts=doubts,
        verdict=verdict_of(doubts, CONTRADICTIONS),
        tokens_per_second=rates.tokens_per_s(batch, step_s),
        per_user_tokens_per_second=rates.tokens_per_s(1.0, step_s),
        kv_bytes=kv_bytes,
        formula_kv_bytes=formula_kv_bytes,
        kv_bytes_match=kv_bytes == formula_kv_bytes,
        experts_touched=experts,
    )


def table_doubts(batches: list[BatchStep]) -> list[str]:
    """Every batch's doubts together, each once, in the order they first appear."""
    doubts = []
    for row in batches:
        for doubt in row.doubts:
            if doubt not in doubts:
                doubts.append(doubt)
    return doubts


# --- the fit, the peak, the cliffs and the bounds ------------------------------------------------


def relative_fit(batches: Sequence[BatchStep]) -> tuple[list[float], list[int]]:
    """((fixed, per_sequence), held at zero): least squares in relative error, both >= 0.

    Each batch's row is divided by its measured step, so the fit minimises the sum of squared
    relative errors: a 2 ms step counts as much as a 48 ms one.
    """
    rows = []
    for row in batches:
        rows.append([1.0 / row.decode_step_s, row.batch / row.decode_step_s])
    return nonnegative_least_squares(rows, [1.0] * len(rows))


def relative_errors(batches: Sequence[BatchStep], fixed: float, per_sequence: float) -> list:
    errors = []
    for row in batches:
        fitted = fixed + per_sequence * row.batch
        errors.append(abs(fitted - row.decode_step_s) / row.decode_step_s)
    return errors


def fit_batches(batches: list[BatchStep]) -> ServeFit:
    """step(B) = fixed + per_sequence x B in relative error, over the range where it holds.

    The range runs from the smallest batch up to the largest for which the fit over that range
    keeps every batch within HOLDS_WITHIN; it holds with at least FIT_AT_LEAST batches. Where no
    such range exists (or fewer batches were measured), the fit over every batch, which does not
    hold.
    """
    chosen = None
    for end in range(len(batches), FIT_AT_LEAST - 1, -1):
        (fixed, per_sequence), held = relative_fit(batches[:end])
        if max(relative_errors(batches[:end], fixed, per_sequence)) <= HOLDS_WITHIN:
            chosen = (end, fixed, per_sequence, held)
            break
    holds = chosen is not None
    if chosen is None:
        (fixed, per_sequence), held = relative_fit(batches)
        chosen = (len(batches), fixed, per_sequence, held)
    end, fixed, per_sequence, held = chosen
    errors = relative_errors(batches, fixed, per_sequence)
    crossover = fixed / per_sequence if per_sequence > 0 else None
    return ServeFit(
        model="step_s = fixed_s + per_sequence_s x batch",
        method="least squares in relative error, both terms held >= 0, over fitted_batches",
        fixed_s=fixed,
        per_sequence_s=per_sequence,
        held_at_zero=[("fixed_s", "per_sequence_s")[i] for i in held],
        median_relative_residual=statistics.median(errors[:end]),
        holds=holds,
        holds_within=HOLDS_WITHIN,
        least_batches=FIT_AT_LEAST,
        measured_batches=[batches[0].batch, batches[-1].batch],
        fitted_batches=[batches[0].batch, batches[end - 1].batch],
        relative_residuals=errors,
        crossover_batch=crossover,
    )


def nearly_free_up_to(batches: list[BatchStep]) -> int:
    """The largest batch reached while batching stayed nearly free.

    Each step up in batch size made the decode step less than NEARLY_FREE longer: throughput grew
    almost as fast as the batch.
    """
    reached = batches[0].batch
    for before, after in itertools.pairwise(batches):
        if after.decode_step_s > before.decode_step_s * (1 + NEARLY_FREE):
            break
        reached = after.batch
    return reached


def gain_per_doubling(before: BatchStep, after: BatchStep) -> float:
    """How much tokens per second grew from ``before`` to ``after``, per doubling of the batch."""
    doublings = math.log2(after.batch / before.batch)
    return (after.tokens_per_second / before.tokens_per_second) ** (1 / doublings) - 1


def peak(batches: list[BatchStep]) -> BatchStep:
    """The batch with the most tokens per second (the smallest such batch)."""
    return max(batches, key=lambda row: (row.tokens_per_second, -row.batch))


def growth_stops_at(batches: list[BatchStep], growth: float) -> BatchStep:
    """The smallest batch from which no step up raised tokens per second by ``growth`` per
    doubling (the largest batch measured where they still grew so at its end)."""
    stops = batches[-1]
    for before, after in reversed(list(itertools.pairwise(batches))):
        if gain_per_doubling(before, after) >= growth:
            break
        stops = before
    return stops


def cliffs(
    batches: list[BatchStep], caches: list[CacheLevel], repeat: int, weights: int
) -> list[Cliff]:
    """Every pair of consecutive batches whose decode step grew faster than the batch.

    Beside each, the memory a step reads at both: ``weights`` bytes of weights once, plus the
    batch's KV cache as stored (every layer's cache is read once a step); and the caches whose
    size lies between those two. The KV cache x ``repeat``, as attention sees it after repeat_kv,
    is given as context and decides nothing: repeat_kv copies one layer's cache at a time, and the
    copy is dropped before the next layer, so the whole repeated size is never held at once. The
    likely cause: "cache" where a cache's size lies between, "spread" where either batch's timing
    is not ok (the cliff may be noise, no cause is named), "unknown" where none lies between.
    """
    found = []
    for before, after in itertools.pairwise(batches):
        batch_ratio = after.batch / before.batch
        step_ratio = after.decode_step_s / before.decode_step_s
        if step_ratio <= batch_ratio:
            continue
        step_bytes_before = weights + before.kv_bytes
        step_bytes_after = weights + after.kv_bytes
        crossed = []
        for level in caches:
            if step_bytes_before < level.bytes <= step_bytes_after:
                crossed.append(level)
        if before.verdict != "ok" or after.verdict != "ok":
            cause = "spread"
        elif crossed:
            cause = "cache"
        else:
            cause = "unknown"
        cliff = Cliff(
            from_batch=before.batch,
            to_batch=after.batch,
            batch_ratio=batch_ratio,
            step_ratio=step_ratio,
            weight_bytes=weights,
            kv_bytes_before=before.kv_bytes,
            kv_bytes_after=after.kv_bytes,
            attention_kv_bytes_before=before.kv_bytes * repeat,
            attention_kv_bytes_after=after.kv_bytes * repeat,
            step_bytes_before=step_bytes_before,
            step_bytes_after=step_bytes_after,
            crossed=crossed,
            likely_cause=cause,
        )
        found.append(cliff)
    return found


def weight_bytes(model) -> int:
    """Every parameter in memory, in bytes (a tied embedding once): what a decode step reads."""
    return sum(parameter.numel() * parameter.element_size() for parameter in model.parameters())


def users_by_speed(batches: list[BatchStep], fit: ServeFit, tokens_per_second: float):
    """(users, how, between): the largest batch whose decode step is at most 1 / speed.

    ``how`` is "measured" (the largest measured batch that meets the target; the next one does not),
    "fit" (between those two measured batches, ``between``, the fit says where the step reaches the
    target, where both lie in the range the fit holds over), "lower bound" (even the largest batch
    measured meets it) or "too slow" (not even one user). Never past the largest batch measured.
    """
    target = rates.seconds_for(1.0, tokens_per_second)
    meeting = [row.batch for row in batches if row.decode_step_s <= target]
    if not meeting:
        return 0, "too slow", None
    best = max(meeting)
    if best == batches[-1].batch:
        return best, "lower bound", None
    above = min(row.batch for row in batches if row.batch > best)
    within_fit = above <= fit.fitted_batches[1]
    if fit.holds and within_fit and fit.per_sequence_s > 0:
        at_target = math.floor((target - fit.fixed_s) / fit.per_sequence_s + 1e-9)
        if best < at_target < above:
            return at_target, "fit", [best, above]
    return best, "measured", [best, above]


def users_bound(
    batches: list[BatchStep],
    fit: ServeFit,
    tokens_per_second: float,
    context: int,
    bytes_per_token: int,
    free_bytes: int | None,
    free_source: str,
) -> UsersBound:
    """Users this device takes at a per-user speed and context.

    By speed and by memory, and which bound binds.
    """
    by_speed, speed_how, between = users_by_speed(batches, fit, tokens_per_second)
    by_memory = None
    if free_bytes is not None:
        by_memory = sequences_that_fit(free_bytes, bytes_per_token * context)
    if by_memory is not None and by_memory < by_speed:
        binding = "memory"
    elif speed_how == "lower bound":
        binding = "not reached"  # the speed held at every batch measured, memory allows more
    else:
        binding = "speed"
    return UsersBound(
        tokens_per_second=tokens_per_second,
        step_target_s=rates.seconds_for(1.0, tokens_per_second),
        context=context,
        users_by_speed=by_speed,
        speed_how=speed_how,
        speed_between=between,
        kv_bytes_per_token=bytes_per_token,
        free_bytes=free_bytes,
        free_source=free_source,
        users_by_memory=by_memory,
        memory_formula="floor(free_bytes / (kv_bytes_per_token x context))",
        binding=binding,
    )


def pass_order(batches: list[int], passes: int) -> list[int]:
    """The batches in clocking order: up in the first pass, down in the second, and so on, so that
    a drift of the machine's speed hits the small and the large batches alike."""
    order = []
    for number in range(passes):
        if number % 2 == 0:
            order += batches
        else:
            order += batches[::-1]
    return order


@dataclass
class ClockedBatch:
    """One batch size's clocked passes, gathered pass after pass by :func:`measure_passes`."""

    steps_s: list[list[float]]  # each pass's decode steps
    prefills_s: list[float] | None  # each pass's prefill; None past serve.prefill_up_to
    kv_bytes: int | None  # the cache's measured bytes (the same in every pass)
    experts: list[float | None]  # each pass's experts touched per decode step (None: dense)


def measure_passes(
    model, config, prompt_ids, within, settings: ServeSettings, device, start
) -> dict[int, ClockedBatch]:
    """Every batch's clocked passes, by batch size, in :func:`pass_order`."""
    measured = {}
    for batch in within:
        prefills = [] if batch <= settings.prefill_up_to else None
        measured[batch] = ClockedBatch(steps_s=[], prefills_s=prefills, kv_bytes=None, experts=[])
    for batch in pass_order(within, settings.passes):
        clocked = measured[batch]
        if clocked.prefills_s is not None:
            clocked.prefills_s.append(clocked_prefill(model, prompt_ids, batch, device))
        steps_s, kv_bytes, experts = decode_batch(
            model, config, prompt_ids, batch, settings.decode_steps, device, start
        )
        clocked.steps_s.append(steps_s)
        clocked.kv_bytes = kv_bytes
        clocked.experts.append(experts)
    return measured


def serve(
    *, model, config, prompt_ids: list[int], settings: ServeSettings, device, run: RunInfo
) -> Serve:
    """serve.json: decode at each batch size (see the module's docstring), then the bounds."""
    decode_steps = settings.decode_steps
    memory_cap_gib = settings.memory_cap_gib
    element = next(model.parameters()).element_size()
    cap = int(memory_cap_gib * GIB)
    tokens = len(prompt_ids) + decode_steps
    planned = sorted({int(b) for b in settings.batches})
    within = [
        b
        for b in planned
        if config_formula_bytes(config=config, tokens=tokens, bytes_per_element=element, batch=b)
        <= cap
    ]
    if not within:
        within = planned[:1]  # one batch is always measured
    load_before = load_average()
    start = prompt_start(model, prompt_ids, within[-1], device)
    for _ in range(settings.warmup):  # first-call costs: the prefill and decode kernels, once
        clocked_prefill(model, prompt_ids, within[0], device)
        decode_batch(model, config, prompt_ids, within[0], 1, device, start)
    meter = ContentionMeter(device, device_clock(device), load_before)
    clocked = measure_passes(model, config, prompt_ids, within, settings, device, start)
    contention = meter.read()
    load_after = load_average()
    measured = []
    smaller = None
    for batch in within:
        passes = clocked[batch]
        experts = None
        if config.use_moe:
            experts = statistics.median(passes.experts)
        row = batch_step(
            batch,
            passes.steps_s,
            passes.prefills_s,
            passes.kv_bytes,
            config_formula_bytes(
                config=config, tokens=tokens, bytes_per_element=element, batch=batch
            ),
            experts,
            smaller,
        )
        measured.append(row)
        smaller = row
    doubts = table_doubts(measured)
    fit = fit_batches(measured)
    top = peak(measured)
    stops = growth_stops_at(measured, settings.growth_per_doubling)
    caches, caches_source = device_caches(device, torch.get_num_threads())
    repeat = config.num_attention_heads // config.num_key_value_heads
    free_bytes, free_source = available_bytes(device)
    per_token = config_formula_bytes(config=config, tokens=1, bytes_per_element=element)
    fitting = min(settings.context, config.max_position_embeddings)  # a longer context cannot run
    bound = users_bound(
        measured, fit, settings.tokens_per_second, fitting, per_token, free_bytes, free_source
    )
    return Serve(
        prompt_len=len(prompt_ids),
        decode_steps=decode_steps,
        warmup=settings.warmup,
        prefill_up_to=settings.prefill_up_to,
        decode_context=tokens,
        context_asked=settings.context,
        batches_planned=planned,
        memory_cap_gib=memory_cap_gib,
        left_out_by_cap=[b for b in planned if b not in within],
        threads=torch.get_num_threads(),
        load_before=load_before,
        load_after=load_after,
        clock=clock_name(),
        passes=settings.passes,
        order=ORDER,
        noisy_cv=NOISY_CV,
        step_noisy_cv=STEP_NOISY_CV,
        doubts=doubts,
        verdict=verdict_of(doubts, CONTRADICTIONS),
        batches=measured,
        fit=fit,
        nearly_free=NEARLY_FREE,
        nearly_free_up_to=nearly_free_up_to(measured),
        peak_batch=top.batch,
        peak_tokens_per_second=top.tokens_per_second,
        peak_gain=top.tokens_per_second / measured[0].tokens_per_second,
        growth_per_doubling=settings.growth_per_doubling,
        growth_stops_at=stops.batch,
        growth_stops_within=stops.batch < measured[-1].batch,
        growth_stops_step_s=stops.decode_step_s,
        cliffs=cliffs(measured, caches, repeat, weight_bytes(model)),
        caches=caches,
        caches_source=caches_source,
        users=bound,
        contention=contention,
        run=run,
    )
