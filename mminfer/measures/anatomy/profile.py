"""Where a step's time goes, measured: each path's generate under torch.profiler.

:func:`profile_path`: the generate runs with a ``record_function`` scope around every module's
forward (hooks) and around the attention module's ``repeat_kv`` and rotary functions (wrapped in
the module that defines the attention class: both backends call them by their global name), so
that each op the profiler records is read off its innermost scope (:data:`CATEGORIES` of
mminfer.measures.anatomy.anatomy): a ``cat`` in the attention's own scope is the cache's, one in
the rotary scope is RoPE's, one outside every forward is generate's (the ids). Each op's self time
counts for its scope's category, so the categories add up to the top-level ops' time; the rest is
the wall time minus that (Python and the framework between ops). A few rounds, each after an
unprofiled one, so that each part has an interval and the profiler's cost is stated.
"""

from __future__ import annotations

import contextlib
import sys
import time

import torch
from torch import nn
from torch.autograd import DeviceType
from torch.autograd.profiler import record_function

from mminfer.measures.anatomy.anatomy import CATEGORIES, REST, Profile
from mminfer.model.generation import GREEDY
from mminfer.model.twin import wrapped_forward
from mminfer.records.interval import median_interval, ratio_interval

SCOPE = "mminfer::"  # the prefix of every scope pushed here
PROFILE_ROUNDS = 3  # profiled rounds per path, each after an unprofiled one
ROTARY = ("apply_rotary", "apply_rotary_pos_emb")  # the builtin's name, MiniMind's


def category_of(name: str, module: nn.Module) -> str:
    """The scope a module's forward opens: lm_head, a linear layer's matmul, the attention's own
    ops, or elementwise (norms, the embedding, the MLP's activation, the blocks' adds)."""
    if name.split(".")[-1] == "lm_head":
        return "lm_head"
    if isinstance(module, nn.Linear):
        return "matmul"
    if "Attention" in type(module).__name__:
        return "attention"
    return "elementwise"


def scoped(function, category: str):
    """``function`` run inside the scope of ``category``."""

    def inside(*args, **kwargs):
        with record_function(SCOPE + category):
            return function(*args, **kwargs)

    return inside


@contextlib.contextmanager
def scopes(model: nn.Module):
    """Every module's forward inside its category's scope, and the attention's repeat_kv and
    rotary functions inside theirs, until the block ends."""
    stack, handles, patched = [], [], []

    def enter(category):
        def pre(module, args):
            scope = record_function(SCOPE + category)
            scope.__enter__()
            stack.append(scope)

        return pre

    def leave(module, args, output):
        stack.pop().__exit__(None, None, None)

    for name, module in model.named_modules():
        handles.append(module.register_forward_pre_hook(enter(category_of(name, module))))
        handles.append(module.register_forward_hook(leave))
        if "Attention" in type(module).__name__:
            source = sys.modules[type(module).__module__]
            for function, category in [("repeat_kv", "repeat_kv")] + [
                (rotary, "elementwise") for rotary in ROTARY
            ]:
                original = getattr(source, function, None)
                if callable(original) and (source, function, original) not in patched:
                    patched.append((source, function, original))
                    setattr(source, function, scoped(original, category))
    try:
        # generate calls self.forward, which runs no hooks: the model's own ops (the logits'
        # slice) in a scope of their own, not taken for generate's
        with wrapped_forward(model, lambda original: scoped(original, "elementwise")):
            yield
    finally:
        for handle in handles:
            handle.remove()
        for source, function, original in patched:
            setattr(source, function, original)


def clock(device):
    """Seconds, read after the device's queued work (the profiler's own clock is not jittered:
    neither is this one, so the rest is the wall minus the ops' time on the same footing)."""
    if torch.device(device).type == "cuda":
        return lambda: (torch.cuda.synchronize(device), time.perf_counter())[1]
    return time.perf_counter


def categorized(events, wall_s: float) -> dict[str, float]:
    """One profiled round from the profiler's raw events (its kineto results: torch's own event
    tree, ``prof.events()``, costs about 50 µs an event in Python, more than the generate it
    describes), nested as torch nests them: each thread's CPU events (async ones aside) sorted by
    start, the longer first, each the child of the innermost open event that contains it. Each
    op's self time (its time minus its children's) counts under its innermost scope's category
    (an op outside every scope is generate's: sampling; a ``cat`` directly in the attention's
    scope is the cache's), REST is the wall minus the top-level ops' time (an op without an op
    above it), and the wall."""
    parts = dict.fromkeys(CATEGORIES, 0.0)
    top = 0.0
    threads: dict[int, list] = {}
    for event in events:
        if event.device_type() == DeviceType.CPU and not event.is_async():
            span = (event.start_ns(), -event.end_ns(), event.name())
            threads.setdefault(event.start_thread_id(), []).append(span)
    selfs = []  # [category (None for a scope), self ns] of each event
    for spans in threads.values():
        spans.sort()
        stack = []  # the open events: (end, innermost scope's category, an op at or above, slot)
        for start, minus_end, name in spans:
            end = -minus_end
            while stack and (start >= stack[-1][0] or end > stack[-1][0]):
                stack.pop()
            inner, nested, parent = None, False, None
            if stack:
                _, inner, nested, parent = stack[-1]
                selfs[parent][1] -= end - start
            if name.startswith(SCOPE):
                stack.append((end, name[len(SCOPE) :], nested, len(selfs)))
                selfs.append([None, end - start])
                continue
            category = inner or "sampling"
            if category == "attention" and name == "aten::cat" and selfs[parent][0] is None:
                category = "kv_cat"  # the cat the attention's own scope runs, not an op's part
            if not nested:
                top += (end - start) / 1e9
            stack.append((end, inner, True, len(selfs)))
            selfs.append([category, end - start])
    for category, self_ns in selfs:
        if category is not None:
            parts[category] += self_ns / 1e9
    return parts | {REST: wall_s - top, "wall": wall_s}


def profile_path(*, model, input_ids, new_tokens: int, use_cache: bool, device) -> Profile:
    """One path's generate, PROFILE_ROUNDS times under torch.profiler (each after an unprofiled
    run): its categories' seconds per round, their medians and intervals, the profiler's cost.
    The ops' CPU time only: on CUDA the device's own time is not read here."""
    read = clock(device)

    def generate():
        start = read()
        model.generate(input_ids, max_new_tokens=new_tokens, use_cache=use_cache, **GREEDY)
        return read() - start

    rounds, unprofiled = [], []  # no warm-up: measure_anatomy's counting generate ran first
    for _ in range(PROFILE_ROUNDS):
        unprofiled.append(generate())
        with (
            scopes(model),
            torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof,
        ):
            wall = generate()
        rounds.append(categorized(prof.profiler.kineto_results.events(), wall))
    keys = [*CATEGORIES, REST]
    return Profile(
        rounds=rounds,
        unprofiled_s=unprofiled,
        parts_s={key: median_interval([r[key] for r in rounds]).median for key in keys},
        parts_interval={key: median_interval([r[key] for r in rounds]) for key in keys},
        wall_s=median_interval([r["wall"] for r in rounds]).median,
        wall_interval=median_interval([r["wall"] for r in rounds]),
        profiler_cost=ratio_interval([r["wall"] for r in rounds], unprofiled),
    )
