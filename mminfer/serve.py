"""Beyond the task: what one machine serves, by memory and by speed.

A server fills a device by batching: B users decode together, one step giving each of them a
token. A cached decode step of a small model is overhead-bound (Python, kernel launches, one read
of every weight), so a bigger batch costs nearly nothing more until the machine turns
compute-bound. Here the task's prompt is decoded B times through the model's own generate
(greedy, with the cache) at each batch size, every step clocked; per batch: the median decode
step, tokens per second (B / step), the batch's KV bytes (measured, against the formula), for a
MoE model how many experts a decode step touches, and up to ``prefill_up_to`` users the prefill
of the whole batch. A larger batch continues from the prompt's cache repeated for every user
(the rows a batch of the same prompt holds), so that measuring it costs its decode steps, not a
prefill of B x prompt tokens.

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

import torch

from mminfer.capacity import sequences_that_fit
from mminfer.counting import ForwardRecorder
from mminfer.greedy import GREEDY
from mminfer.kvcache import cache_tensor_bytes, kv_formula_bytes
from mminfer.records import BatchStep, RunInfo, Serve, ServeFit, UsersBound
from mminfer.sweep import nonnegative_least_squares
from mminfer.timing import load_average, synced_clock

NEARLY_FREE = 0.25  # a doubling of the batch is "nearly free" while the step grows less than this
HOLDS_WITHIN = 0.25  # the fit holds where its median relative residual is below this
GIB = 2**30


# --- memory --------------------------------------------------------------------------------------


def available_bytes(device) -> tuple[int | None, str]:
    """(bytes free for a cache on ``device`` now, where the figure comes from)."""
    device = torch.device(device)
    if device.type == "cuda":
        free, _ = torch.cuda.mem_get_info(device)
        return free, "torch.cuda.mem_get_info"
    try:
        with open("/proc/meminfo", encoding="ascii") as lines:
            for line in lines:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024, "/proc/meminfo MemAvailable"
    except OSError:
        pass
    return None, "unknown on this system"


def batch_cache_bytes(config, tokens: int, batch: int, bytes_per_element: int) -> int:
    return kv_formula_bytes(
        config.num_hidden_layers,
        tokens,
        config.num_key_value_heads,
        config.head_dim,
        bytes_per_element,
        batch,
    )


# --- experts of a MoE model ----------------------------------------------------------------------


class ExpertCounter:
    """Counts, for every forward call, the distinct experts each MoE layer routes to.

    A hook on each router (``mlp.gate``) recomputes the routing from its output; the model is
    untouched.
    """

    def __init__(self, model, experts_per_token: int):
        self.experts_per_token = experts_per_token
        self.per_call: list[list[int]] = []  # one list per router call
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


def prompt_cache(model, prompt_ids: list[int], device):
    """(the prompt's cache, the first new token) from one user's prefill, through generate."""
    input_ids = torch.tensor([prompt_ids], dtype=torch.long, device=device)
    output = model.generate(input_ids, max_new_tokens=1, use_cache=True, return_kv=True, **GREEDY)
    return output["past_kv"], output["generated_ids"][0, -1].item()


def repeated(cache, batch: int):
    """A batch's cache of identical rows: one user's (K, V) per layer repeated ``batch`` times."""
    return [(k.repeat(batch, 1, 1, 1), v.repeat(batch, 1, 1, 1)) for k, v in cache]


def decode_batch(model, config, prompt_ids: list[int], batch: int, steps: int, device, start=None):
    """``steps`` clocked decode steps of ``batch`` users through generate (greedy, with the cache).

    Without ``start``, generate begins from the prompt: its first step is the batch's prefill,
    clocked too. With ``start`` (the prompt's cache and first token of :func:`prompt_cache`), the
    batch continues from that cache repeated for every user: identical rows, as a batch of the
    same prompt holds them, without paying a prefill of batch x prompt tokens.
    Returns (prefill seconds or None, each decode step's seconds, the cache's measured bytes,
    experts touched per decode step averaged over the layers or None).
    """
    clock = synced_clock(device)
    recorder = ForwardRecorder(clock=clock)
    counter = None
    if config.use_moe:
        counter = ExpertCounter(model, config.num_experts_per_tok)
    if start is None:
        input_ids = torch.tensor([prompt_ids], dtype=torch.long, device=device)
        arguments = {"max_new_tokens": steps + 1, "num_return_sequences": batch}
    else:
        cache, first_token = start
        rows = [prompt_ids + [first_token]] * batch
        input_ids = torch.tensor(rows, dtype=torch.long, device=device)
        arguments = {"max_new_tokens": steps, "past_key_values": repeated(cache, batch)}
    try:
        with recorder.watching(model):
            output = model.generate(
                input_ids, use_cache=True, return_kv=True, **arguments, **GREEDY
            )
    finally:
        if counter is not None:
            counter.remove()
    ends = recorder.started[1:] + [clock()]
    seconds = [end - begin for begin, end in zip(recorder.started, ends)]
    prefill_s = None
    first_decode = 0
    if start is None:
        prefill_s = seconds[0]
        first_decode = 1
    experts = None
    if counter is not None:
        layers = config.num_hidden_layers
        per_step = []
        for call in range(first_decode, len(seconds)):
            counts = counter.per_call[call * layers : (call + 1) * layers]
            per_step.append(sum(counts) / layers)
        experts = statistics.median(per_step)
    measured = cache_tensor_bytes(output["past_kv"])
    return prefill_s, seconds[first_decode:], measured, experts


def batch_step(model, config, prompt_ids, batch: int, steps: int, device, element: int, start):
    """One batch's row of serve.json (``start``: see :func:`decode_batch`)."""
    prefill_s, steps_s, measured, experts = decode_batch(
        model, config, prompt_ids, batch, steps, device, start
    )
    step_s = statistics.median(steps_s)
    formula = batch_cache_bytes(config, len(prompt_ids) + steps, batch, element)
    return BatchStep(
        batch=batch,
        prefill_s=prefill_s,
        decode_step_s=step_s,
        decode_steps_s=steps_s,
        tokens_per_second=batch / step_s,
        per_user_tokens_per_second=1.0 / step_s,
        kv_bytes=measured,
        formula_kv_bytes=formula,
        kv_bytes_match=measured == formula,
        experts_touched=experts,
    )


# --- the fit and the bounds ----------------------------------------------------------------------


def fit_batches(batches: list[BatchStep]) -> ServeFit:
    """step(B) = fixed + per_sequence x B, least squares with both held non-negative."""
    rows = [[1.0, float(row.batch)] for row in batches]
    seconds = [row.decode_step_s for row in batches]
    (fixed, per_sequence), held = nonnegative_least_squares(rows, seconds)
    errors = []
    for row, measured in zip(rows, seconds):
        errors.append(abs(fixed + per_sequence * row[1] - measured) / measured)
    residual = statistics.median(errors)
    crossover = fixed / per_sequence if per_sequence > 0 else None
    return ServeFit(
        model="step_s = fixed_s + per_sequence_s x batch",
        fixed_s=fixed,
        per_sequence_s=per_sequence,
        held_at_zero=[("fixed_s", "per_sequence_s")[i] for i in held],
        median_relative_residual=residual,
        holds=residual <= HOLDS_WITHIN,
        measured_batches=[batches[0].batch, batches[-1].batch],
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


def users_by_speed(batches: list[BatchStep], fit: ServeFit, tokens_per_second: float):
    """(users, how, between): the largest batch whose decode step is at most 1 / speed.

    ``how`` is "measured" (the largest measured batch that meets the target; the next one does not),
    "fit" (between those two measured batches, ``between``, the fit says where the step reaches the
    target), "lower bound" (even the largest batch measured meets it) or "too slow" (not even one
    user). Never past the largest batch measured.
    """
    target = 1.0 / tokens_per_second
    meeting = [row.batch for row in batches if row.decode_step_s <= target]
    if not meeting:
        return 0, "too slow", None
    best = max(meeting)
    if best == batches[-1].batch:
        return best, "lower bound", None
    above = min(row.batch for row in batches if row.batch > best)
    if fit.holds and fit.per_sequence_s > 0:
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
        step_target_s=1.0 / tokens_per_second,
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


def serve(
    model,
    config,
    prompt_ids: list[int],
    batches: list[int],
    decode_steps: int,
    warmup: int,
    prefill_up_to: int,
    memory_cap_gib: float,
    tokens_per_second: float,
    context: int,
    device,
    run: RunInfo,
) -> Serve:
    """serve.json: decode at each batch size (see the module's docstring), then the bounds."""
    element = next(model.parameters()).element_size()
    cap = int(memory_cap_gib * GIB)
    tokens = len(prompt_ids) + decode_steps
    planned = sorted({int(b) for b in batches})
    within = [b for b in planned if batch_cache_bytes(config, tokens, b, element) <= cap]
    if not within:
        within = planned[:1]  # one batch is always measured
    load_before = load_average()
    for _ in range(warmup):  # first-call costs: the prefill and decode kernels, once
        decode_batch(model, config, prompt_ids, within[0], 1, device)
    start = prompt_cache(model, prompt_ids, device)  # the larger batches continue from it
    measured = []
    for batch in within:
        begin = None if batch <= prefill_up_to else start
        row = batch_step(model, config, prompt_ids, batch, decode_steps, device, element, begin)
        measured.append(row)
    load_after = load_average()
    fit = fit_batches(measured)
    free_bytes, free_source = available_bytes(device)
    per_token = batch_cache_bytes(config, 1, 1, element)
    bound = users_bound(
        measured, fit, tokens_per_second, context, per_token, free_bytes, free_source
    )
    return Serve(
        prompt_len=len(prompt_ids),
        decode_steps=decode_steps,
        warmup=warmup,
        prefill_up_to=prefill_up_to,
        batches_planned=planned,
        memory_cap_gib=memory_cap_gib,
        left_out_by_cap=[b for b in planned if b not in within],
        threads=torch.get_num_threads(),
        load_before=load_before,
        load_after=load_after,
        batches=measured,
        fit=fit,
        nearly_free=NEARLY_FREE,
        nearly_free_up_to=nearly_free_up_to(measured),
        users=bound,
        run=run,
    )
