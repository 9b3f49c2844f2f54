"""Beyond the task: what one machine serves, by memory and by speed.

A server fills a device by batching: B users decode together, one step giving each of them a
token. A cached decode step of a small model is overhead-bound (Python, kernel launches, one read
of every weight), so a bigger batch costs nearly nothing more until the machine turns
compute-bound. Here the task's prompt is decoded B times through the model's own generate
(greedy, with the cache) at each batch size, every decode step clocked. The users share the
prompt's cache (one prefill, repeated for every user, as a shared system prompt would be), and
each continues from another of the prompt's most likely next tokens, so that their sequences
differ from there on. Per batch: the median decode step, tokens per second (B / step), the
batch's KV bytes (measured, against the formula), for a MoE model how many experts a decode step
touches, and up to ``prefill_up_to`` users the prefill of the whole batch, clocked on its own.

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
from dataclasses import dataclass
from pathlib import Path

import torch

from mminfer.capacity import GIB, sequences_that_fit
from mminfer.counting import ForwardRecorder
from mminfer.greedy import GREEDY
from mminfer.kvcache import cache_tensor_bytes, kv_formula_bytes
from mminfer.records import BatchStep, RunInfo, Serve, ServeFit, UsersBound
from mminfer.sweep import nonnegative_least_squares
from mminfer.timing import load_average, synced_clock

NEARLY_FREE = 0.25  # a doubling of the batch is "nearly free" while the step grows less than this
HOLDS_WITHIN = 0.25  # the fit holds where its median relative residual is below this


@dataclass(frozen=True)
class ServeSettings:
    """What the serve rule measures: config section ``serve`` (its keys are these fields)."""

    batches: list[int]  # batch sizes decoded (those past memory_cap_gib are left out)
    decode_steps: int  # decode steps clocked per batch
    warmup: int  # untimed short generations at the smallest batch first
    prefill_up_to: int  # batches up to this size also clock their prefill
    memory_cap_gib: float  # the largest KV cache a measured batch may hold
    tokens_per_second: float  # each user's decode speed, for the users by speed
    context: int  # tokens each user's cache holds, for the users by memory


# --- memory --------------------------------------------------------------------------------------


def cgroup_free_bytes() -> int | None:
    """What this process's cgroup (v2) still allows: memory.max - memory.current; None without a
    limit (a SLURM job's --mem, a container's limit)."""
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text(encoding="ascii").strip()
        used = Path("/sys/fs/cgroup/memory.current").read_text(encoding="ascii").strip()
    except OSError:
        return None
    if limit == "max":
        return None
    return int(limit) - int(used)


def mem_available_bytes() -> int | None:
    """The machine's MemAvailable (Linux), or None where the system does not say."""
    try:
        with open("/proc/meminfo", encoding="ascii") as lines:
            for line in lines:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def available_bytes(device) -> tuple[int | None, str]:
    """(bytes free for caches on ``device`` now, where the figure comes from).

    On CUDA, torch.cuda.mem_get_info after the caching allocator has handed back what it holds
    unused. On a CPU, the machine's MemAvailable, or this process's cgroup limit where that is
    lower (a SLURM job's memory, a container's).
    """
    device = torch.device(device)
    if device.type == "cuda":
        torch.cuda.empty_cache()
        free, _ = torch.cuda.mem_get_info(device)
        return free, "torch.cuda.mem_get_info"
    machine = mem_available_bytes()
    limit = cgroup_free_bytes()
    if limit is not None and (machine is None or limit < machine):
        return limit, "the cgroup's memory.max - memory.current"
    if machine is not None:
        return machine, "/proc/meminfo MemAvailable"
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
    clock = synced_clock(device)
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
    clock = synced_clock(device)
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


def batch_step(model, config, prompt_ids, batch: int, steps: int, device, element, start, prefill):
    """One batch's row of serve.json; ``prefill``: also clock the batch's prefill."""
    prefill_s = None
    if prefill:
        prefill_s = clocked_prefill(model, prompt_ids, batch, device)
    steps_s, measured, experts = decode_batch(
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
    model, config, prompt_ids: list[int], settings: ServeSettings, device, run: RunInfo
) -> Serve:
    """serve.json: decode at each batch size (see the module's docstring), then the bounds."""
    decode_steps = settings.decode_steps
    memory_cap_gib = settings.memory_cap_gib
    element = next(model.parameters()).element_size()
    cap = int(memory_cap_gib * GIB)
    tokens = len(prompt_ids) + decode_steps
    planned = sorted({int(b) for b in settings.batches})
    within = [b for b in planned if batch_cache_bytes(config, tokens, b, element) <= cap]
    if not within:
        within = planned[:1]  # one batch is always measured
    load_before = load_average()
    start = prompt_start(model, prompt_ids, within[-1], device)
    for _ in range(settings.warmup):  # first-call costs: the prefill and decode kernels, once
        clocked_prefill(model, prompt_ids, within[0], device)
        decode_batch(model, config, prompt_ids, within[0], 1, device, start)
    measured = []
    for batch in within:
        prefill = batch <= settings.prefill_up_to
        row = batch_step(
            model, config, prompt_ids, batch, decode_steps, device, element, start, prefill
        )
        measured.append(row)
    load_after = load_average()
    fit = fit_batches(measured)
    free_bytes, free_source = available_bytes(device)
    per_token = batch_cache_bytes(config, 1, 1, element)
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
        batches=measured,
        fit=fit,
        nearly_free=NEARLY_FREE,
        nearly_free_up_to=nearly_free_up_to(measured),
        users=bound,
        run=run,
    )
