"""Where a step's time goes: each call of forward in one generate, counted exactly.

For step 1's generation (greedy, P prompt tokens, N new ones), with and without the cache, every
call of ``forward`` is watched (mminfer.model.twin.wrapped_forward): the tokens it was fed, the
context its attention covered after it (past + fed), the logits rows its lm_head computed
(MiniMind's ``logits_to_keep`` defaults to 0: every fed position) beside the one row
``logits_to_keep=1`` would have, and the FLOPs of its matmuls two ways: as torch's
``FlopCounterMode`` counts them (:class:`RegistryFlops`, its rule without its cost) and as the
formula gives them from the model's config (:func:`formula_parts`). Where the counter has no
entry for a contraction the call ran (CPU SDPA in torch 2.13), the op is named beside the
formula's part it computes, never a silent gap.

In the same generate call, the ops that ran as kernels (inside generate's own inference_mode; a
composite op such as linear counted by its parts), attributed to the calls of forward or to
generate's own work between them: a backend's figure (the two backends' modules dispatch
differently), never compared across them. And the bytes each call reads and writes by the
formula (:func:`bytes_parts`): its weights once, the cache's cat, repeat_kv's copies, the K and V
the attention reads, the explicit path's scores, the logits. :func:`measure_anatomy` sets this
machine's speeds beside them (mminfer.timing.machine) in anatomy.json's whole record; the time split
joins it with time.json at report time (mminfer.measures.anatomy.anatomy).
"""

from __future__ import annotations

import functools
import logging
from collections import Counter
from dataclasses import dataclass

import torch
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.flop_counter import flop_registry

from mminfer.errors import MminferError
from mminfer.measures.anatomy.anatomy import (
    PATHS,
    Anatomy,
    Bandwidth,
    Machine,
    PathCounts,
    Step,
    Totals,
)
from mminfer.measures.anatomy.profile import PROFILE_ROUNDS, profile_path
from mminfer.model.generation import GREEDY
from mminfer.model.twin import wrapped_forward
from mminfer.records import RunInfo
from mminfer.records.spread import NOISY_CV
from mminfer.timing import machine
from mminfer.timing.clock import device_clock

# Ops that multiply and add over a reduced axis: a FLOP counter owes each of them a count.
CONTRACTIONS = ("aten.mm", "aten.bmm", "aten.addmm", "aten.baddbmm", "aten.convolution")
SDPA = "scaled_dot_product"  # in the name of every SDPA kernel: the attention's two matmuls
SDPA_CPU = "aten._scaled_dot_product_flash_attention_for_cpu"  # CPU SDPA's kernel in torch 2.13
# The formula's part an uncounted contraction computes.
PART_OF_OP = {SDPA: "attention"}
FLOP_COUNTER = "FlopCounterMode's flop_registry, op by op"
# A bandwidth probe past the last-level cache: at least this many times its size, and this much
# (a copy of twice the cache streams through it: past a 480 MiB L3, 1 GiB and 2 GiB gave the same
# rate, 25.6 and 26.1 GB/s, and 2 GiB cost 3 s more to allocate), never more than this share of
# the memory the job may still use (four times a 480 MiB L3 was 2 GiB of a SLURM job's 4 GB).
PAST_LAST_LEVEL_TIMES = 2
PAST_LAST_LEVEL_LEAST = 64 << 20
PAST_LAST_LEVEL_UNKNOWN = 256 << 20  # where the system does not say its caches
PAST_LAST_LEVEL_MEMORY_SHARE = 0.25


@dataclass(frozen=True)
class Shape:
    """What the formula needs of a model, read off its config and its modules."""

    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    vocab: int
    experts: int  # 0 for a dense model
    experts_per_token: int
    moe_intermediate: int
    lora: tuple[tuple[str, int, int, int], ...]  # (module, in, out, rank) per adapted linear
    flash: bool = True  # config.flash_attn: SDPA where more than one token is fed


def lora_of(model: nn.Module) -> tuple[tuple[str, int, int, int], ...]:
    """Every linear layer carrying a LoRA (module.lora, in both backends: MiniMind's apply_lora
    sets the attribute, the builtin's Linear holds it): its name, in and out features, rank."""
    adapted = []
    for name, module in model.named_modules():
        lora = getattr(module, "lora", None)
        if isinstance(module, nn.Linear) and isinstance(lora, nn.Module):
            adapted.append((name, module.in_features, module.out_features, lora.A.out_features))
    return tuple(adapted)


def shape_of(model: nn.Module) -> Shape:
    """The model's :class:`Shape` from ``model.config`` (both backends name the fields alike)."""
    config = model.config
    heads = config.num_attention_heads
    moe = bool(getattr(config, "use_moe", False))
    lora = lora_of(model)
    for name, *_ in lora:
        if ".experts." in name or name.endswith("lm_head"):
            raise MminferError(
                f"a LoRA on {name}: the anatomy's formula counts LoRA on the layers every fed "
                "token passes (attention and dense MLP), not on an expert's or the lm_head"
            )
    return Shape(
        layers=config.num_hidden_layers,
        hidden=config.hidden_size,
        heads=heads,
        kv_heads=config.num_key_value_heads,
        head_dim=getattr(config, "head_dim", None) or config.hidden_size // heads,
        intermediate=config.intermediate_size,
        vocab=config.vocab_size,
        experts=config.num_experts if moe else 0,
        experts_per_token=config.num_experts_per_tok if moe else 0,
        moe_intermediate=config.moe_intermediate_size if moe else 0,
        lora=lora,
        flash=bool(getattr(config, "flash_attn", True)),
    )


def formula_parts(shape: Shape, fed: int, context: int, rows: int) -> dict[str, int]:
    """The FLOPs of one forward's matmuls (two per multiply-add), by part.

    ``fed`` tokens t, ``context`` c (past + t), ``rows`` of logits; per layer: q, k, v and o
    projections 2·t·in·out each; the attention's two matmuls over the whole t × c rectangle
    (scores and weighted values) 4·t·c·heads·head_dim; a dense MLP 6·t·hidden·intermediate, or MoE's
    router 2·t·hidden·experts and its experts 6·t·k·hidden·moe_intermediate (each token's k experts
    are distinct); each LoRA 2·t·rank·(in + out); then the lm_head 2·rows·hidden·vocab.
    """
    h, d = shape.hidden, shape.head_dim
    q_out, kv_out = shape.heads * d, shape.kv_heads * d
    projections = 2 * fed * h * (q_out + 2 * kv_out) + 2 * fed * q_out * h
    parts = {
        "projections": shape.layers * projections,
        "attention": shape.layers * 4 * fed * context * shape.heads * d,
    }
    if shape.experts:
        parts["router"] = shape.layers * 2 * fed * h * shape.experts
        per_token = shape.experts_per_token * 6 * h * shape.moe_intermediate
        parts["experts"] = shape.layers * fed * per_token
    else:
        parts["mlp"] = shape.layers * 6 * fed * h * shape.intermediate
    parts["lora"] = sum(2 * fed * rank * (n_in + n_out) for _, n_in, n_out, rank in shape.lora)
    parts["lm_head"] = 2 * rows * h * shape.vocab
    return parts


def weight_elements(shape: Shape, fed: int) -> int:
    """The weights one forward of ``fed`` tokens reads, once each: every layer's projections and
    MLP (a MoE layer's router and min(experts, fed x k) experts: an upper bound, tokens may share
    experts), each LoRA's pair, the lm_head; the norms' and the embedding's rows aside."""
    h, d = shape.hidden, shape.head_dim
    q_out, kv_out = shape.heads * d, shape.kv_heads * d
    per_layer = h * (q_out + 2 * kv_out) + q_out * h
    if shape.experts:
        touched = min(shape.experts, fed * shape.experts_per_token)
        per_layer += h * shape.experts + touched * 3 * h * shape.moe_intermediate
    else:
        per_layer += 3 * h * shape.intermediate
    lora = sum(rank * (n_in + n_out) for _, n_in, n_out, rank in shape.lora)
    return shape.layers * per_layer + lora + shape.vocab * h


def bytes_parts(shape: Shape, fed: int, context: int, rows: int, bytes_per_element: int) -> dict:
    """The bytes one forward reads and writes by the formula, by part (activations aside).

    ``weights`` (:func:`weight_elements`); ``kv_cat``: with a past (context > fed), each layer's
    torch.cat reads the past K and V and writes them one call longer, 2·(past + context)·kv_heads·d;
    ``repeat_kv``: where heads > kv_heads it reads K and V and writes them n_rep times,
    2·context·d·(kv_heads + heads); ``attention_kv``: the attention reads K and V at every head,
    2·context·heads·d; ``scores``: the explicit path (not SDPA: one token fed, or a past)
    writes the t × c scores, softmax reads and writes them, the second matmul reads them,
    4·t·c·heads; ``logits``: rows·vocab written. Per layer where it says so, times the bytes per
    element.
    """
    d, layers = shape.head_dim, shape.layers
    past = context - fed
    sdpa = shape.flash and fed > 1 and past == 0
    kv_cat = 2 * (past + context) * shape.kv_heads * d if past else 0
    repeat = (
        2 * context * d * (shape.kv_heads + shape.heads) if shape.heads != shape.kv_heads else 0
    )
    elements = {
        "weights": weight_elements(shape, fed),
        "kv_cat": layers * kv_cat,
        "repeat_kv": layers * repeat,
        "attention_kv": layers * 2 * context * shape.heads * d,
        "scores": 0 if sdpa else layers * 4 * fed * context * shape.heads,
        "logits": rows * shape.vocab,
    }
    return {part: count * bytes_per_element for part, count in elements.items()}


def contraction(name: str) -> str | None:
    """What an op (its overload packet's name, "aten.mm") contracts: itself where it is one of
    CONTRACTIONS, SDPA for an SDPA kernel, None for the rest."""
    if name in CONTRACTIONS:
        return name
    if SDPA in name:
        return SDPA
    return None


class RegistryFlops(TorchDispatchMode):
    """Counts FLOPs as FlopCounterMode does, op by op, and names every op that runs as a kernel
    by overload packet ("aten.mm"; a decomposed op is named by its parts).

    The same rule as FlopCounterMode's dispatch: an op in its registry (``flop_registry``) is run
    and counted by the registry's function, given the same arguments and output; an op outside
    it that has a CompositeImplicitAutograd decomposition (linear, matmul, SDPA's composite) is
    decomposed, its parts dispatched here again; any other is run uncounted. FlopCounterMode
    also tracks modules, re-enters itself to try a decomposition for every op outside its
    registry and takes matmul apart in Python, which together cost more than a small model's
    decode step: here only the ops that have one are decomposed, by their C++ kernel where there
    is one (the course shape's anatomy job: 17 s with FlopCounterMode per call, 8.4 s now).
    tests/test_anatomy.py holds the counts to FlopCounterMode's on every call of every variant.
    """

    def __init__(self):
        super().__init__()
        self.flops = 0
        self.calls: Counter[str] = Counter()  # the current call of forward's kernels, by name
        self.between = 0  # kernels run outside every call of forward (generate's own work)
        self.inside = False
        self.decomposes: dict = {}  # op -> its decomposition, or None (asked once per op)

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        """False: leave ``__torch_dispatch__`` unwrapped. torch wraps a mode's dispatch to keep its
        compiler out of the mode's frames (its docstring's opt-out), and the wrapper imports the
        compiler on the first op, about 3 s; nothing under this mode is compiled."""
        return False

    def decomposition(self, func):
        """How ``func`` decomposes, asked once per op: its C++ CompositeImplicitAutograd kernel
        where it has one (the parts it dispatches are the Python decomposition's, at a fraction
        of its cost: matmul's Python one costs more than the matmul), else the Python one, else
        None."""
        if func not in self.decomposes:
            key = torch._C.DispatchKey.CompositeImplicitAutograd
            found = None
            if torch._C._dispatch_has_kernel_for_dispatch_key(func.name(), key):
                found = functools.partial(func._op_dk, key)
            elif key in func.py_kernels:
                found = func.py_kernels[key]
            self.decomposes[func] = found
        return self.decomposes[func]

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        packet = func._overloadpacket
        count = flop_registry.get(packet)
        if count is None:
            decompose = self.decomposition(func)
            if decompose is not None:
                with self:
                    out = decompose(*args, **kwargs)
                if out is not NotImplemented:
                    return out  # its parts were dispatched here, each named and counted
        if self.inside:
            self.calls[str(packet)] += 1
        else:
            self.between += 1
        out = func(*args, **kwargs)
        if count is not None:
            self.flops += count(*args, **kwargs, out_val=out)
        return out


def uncounted(calls: Counter) -> dict[str, int]:
    """The contractions among ``calls`` that FlopCounterMode has no entry for, with their calls."""
    counted = {str(op) for op in flop_registry}
    return {
        name: n for name, n in sorted(calls.items()) if contraction(name) and name not in counted
    }


def past_length(past_key_values) -> int:
    """Cached positions, as generate reads them: the first layer's K is (b, past, kv_heads, d)."""
    return past_key_values[0][0].shape[1] if past_key_values else 0


def step_of(
    shape: Shape,
    *,
    fed: int,
    context: int,
    rows: int,
    flops_counted: int,
    uncounted_ops: dict[str, int],
    ops: int,
    bytes_per_element: int,
) -> Step:
    """One call of forward's :class:`Step`: what was counted (fed, context, logits rows, the
    counter's FLOPs, the ops it has no entry for, the kernels) beside the formulas' FLOPs and
    bytes, and the formula's parts the uncounted ops compute (the counter's gap)."""
    parts = formula_parts(shape, fed, context, rows)
    unseen = {PART_OF_OP.get(contraction(name)) for name in uncounted_ops}
    sizes = bytes_parts(shape, fed, context, rows, bytes_per_element)
    return Step(
        fed=fed,
        context=context,
        logits_rows=rows,
        logits_rows_keep_one=1,
        flops_counted=flops_counted,
        flops_formula=sum(parts.values()),
        flops_unseen=sum(parts.get(part, 0) for part in unseen if part),
        uncounted_ops=uncounted_ops,
        formula_parts=parts,
        bytes_formula=sum(sizes.values()),
        bytes_parts=sizes,
        ops=ops,
    )


def counted_calls(
    *, model, input_ids: torch.Tensor, new_tokens: int, use_cache: bool
) -> tuple[list[Step], int, torch.Tensor]:
    """Generate greedily under one counter (:class:`RegistryFlops`): each call of forward's
    :class:`Step` (the counter read before and after it), the kernels generate ran between the
    calls (argmax, the cat of the ids), and the ids generate returned."""
    shape = shape_of(model)
    bytes_per_element = next(model.parameters()).element_size()
    steps: list[Step] = []
    counter = RegistryFlops()

    def counting(original):
        def counted_forward(input_ids, attention_mask=None, past_key_values=None, **kwargs):
            fed = int(input_ids.shape[1])
            context = past_length(past_key_values) + fed
            counter.calls = Counter()
            before = counter.flops
            counter.inside = True
            try:
                outputs = original(input_ids, attention_mask, past_key_values, **kwargs)
            finally:
                counter.inside = False
            step = step_of(
                shape,
                fed=fed,
                context=context,
                rows=int(outputs.logits.shape[1]),
                flops_counted=int(counter.flops - before),
                uncounted_ops=uncounted(counter.calls),
                ops=sum(counter.calls.values()),
                bytes_per_element=bytes_per_element,
            )
            steps.append(step)
            return outputs

        return counted_forward

    with wrapped_forward(model, counting), counter:
        output = model.generate(input_ids, max_new_tokens=new_tokens, use_cache=use_cache, **GREEDY)
    return steps, counter.between, output


def summed(parts: list[dict[str, int]]) -> dict[str, int]:
    """Parts added up key by key, in the first one's order."""
    total = Counter()
    for part in parts:
        total.update(part)
    return {key: total[key] for key in parts[0]} if parts else {}


# The counts of a Step that its path's Totals add up under the same name.
SUMMED = (
    "fed",
    "context",
    "logits_rows",
    "logits_rows_keep_one",
    "flops_counted",
    "flops_formula",
    "flops_unseen",
    "bytes_formula",
)


def totals_of(steps: list[Step], between: int) -> Totals:
    """A path's :class:`Totals`: its steps summed, their parts key by key, the kernels in the
    calls and ``between`` them."""
    in_forward = sum(step.ops for step in steps)
    return Totals(
        calls=len(steps),
        **{key: sum(getattr(step, key) for step in steps) for key in SUMMED},
        formula_parts=summed([step.formula_parts for step in steps]),
        bytes_parts=summed([step.bytes_parts for step in steps]),
        ops_in_forward=in_forward,
        ops_between=between,
        ops=in_forward + between,
    )


def path_counts(*, model, input_ids: torch.Tensor, new_tokens: int, use_cache: bool) -> PathCounts:
    """One way of generating, counted in one generate call: each call of forward (fed, context,
    logits rows, FLOPs both ways, bytes, kernels) and the totals."""
    steps, between, output = counted_calls(
        model=model, input_ids=input_ids, new_tokens=new_tokens, use_cache=use_cache
    )
    totals = totals_of(steps, between)
    return PathCounts(
        steps=steps,
        totals=totals,
        working_set_bytes=totals.bytes_formula // max(1, totals.calls),
        new_ids=output[0, input_ids.shape[1] :].tolist(),
    )


def past_last_level_bytes(last_level: int | None, available: int | None) -> int:
    """The working set of the bandwidth probe past the last-level cache: PAST_LAST_LEVEL_TIMES the
    cache and at least PAST_LAST_LEVEL_LEAST (PAST_LAST_LEVEL_UNKNOWN where the system does not say
    its caches), but at most PAST_LAST_LEVEL_MEMORY_SHARE of the ``available`` bytes (None:
    unknown, no cap)."""
    if last_level is None:
        wanted = PAST_LAST_LEVEL_UNKNOWN
    else:
        wanted = max(PAST_LAST_LEVEL_TIMES * last_level, PAST_LAST_LEVEL_LEAST)
    if available is None:
        return wanted
    return min(wanted, int(PAST_LAST_LEVEL_MEMORY_SHARE * available))


def measure_machine(
    *, device, dtype, working_sets: dict[str, int], threads: int, runs: int = machine.PROBE_RUNS
) -> Machine:
    """This machine's speeds (mminfer.timing.machine): an op's dispatch, the matmul FLOP/s, and the
    bandwidth at each path's working set and past the last-level cache."""
    last_level = machine.last_level_bytes(device, threads)
    available, source = machine.available_bytes(device)
    sizes = working_sets | {"past_last_level": past_last_level_bytes(last_level, available)}
    measured = Machine(
        op=machine.op_speed(device, runs=runs),
        op_probe=machine.OP_PROBE,
        matmul=machine.matmul_speed(device=device, dtype=dtype, runs=runs),
        matmul_size=machine.MATMUL_SIZE,
        bandwidth=[
            Bandwidth(
                at=at, working_set_bytes=size, speed=machine.copy_speed(device, size, runs=runs)
            )
            for at, size in sizes.items()
        ],
        last_level_bytes=last_level,
        noisy_cv=NOISY_CV,
    )
    if measured.past_in_cache():
        logging.getLogger("mminfer").warning(
            "the bandwidth probe past the last-level cache (%d B) fits in it (%d B): %s leaves"
            " %s B, of which it takes at most %.0f%%; its rate is the cache's, not memory's",
            sizes["past_last_level"],
            last_level,
            source,
            available,
            100 * PAST_LAST_LEVEL_MEMORY_SHARE,
        )
    return measured


def each_path(function, **arguments) -> dict:
    """{path: ``function(**arguments, use_cache=...)``} for each of PATHS."""
    return {name: function(**arguments, use_cache=name == "with_cache") for name in PATHS}


def measure_anatomy(
    *,
    model,
    prompt_ids: list[int],
    new_tokens: int,
    device,
    run: RunInfo,
    probe_runs: int,
    split_tolerance: float,
) -> Anatomy:
    """anatomy.json: step 1's greedy generation taken apart both ways, and the machine beside it.

    Counts first (one generate call each way), then the probes, then each path under torch's
    profiler (mminfer.measures.anatomy.profile), with torch's threads as the job set them
    (time.json's: the rule times alone), and how busy the machine was while the probes ran.
    """
    load_before = machine.load_average()
    input_ids = torch.tensor([prompt_ids], dtype=torch.long, device=device)
    with machine.phase("counts", "one counted generation of each path"):
        paths = each_path(path_counts, model=model, input_ids=input_ids, new_tokens=new_tokens)
    threads = torch.get_num_threads()
    meter = machine.ContentionMeter(device, device_clock(device), load_before)
    with machine.phase("probes", f"{probe_runs} runs and a warm-up of each of 5 probes"):
        measured_machine = measure_machine(
            device=device,
            dtype=next(model.parameters()).dtype,
            working_sets={name: counts.working_set_bytes for name, counts in paths.items()},
            threads=threads,
            runs=probe_runs,
        )
    rounds = f"{PROFILE_ROUNDS} profiled generations of each path, each after an unprofiled one"
    with machine.phase("profile", rounds):
        profile = each_path(
            profile_path, model=model, input_ids=input_ids, new_tokens=new_tokens, device=device
        )
    uncounted = {}  # every op the counter missed, named with the formula's part it computes
    for counts in paths.values():
        for step in counts.steps:
            for name in step.uncounted_ops:
                uncounted[name] = PART_OF_OP.get(contraction(name)) or "none of the formula's"
    return Anatomy(
        prompt_len=len(prompt_ids),
        new_tokens=new_tokens,
        with_cache=paths["with_cache"],
        without_cache=paths["without_cache"],
        same_ids=paths["with_cache"].new_ids == paths["without_cache"].new_ids,
        uncounted_ops=uncounted,
        flop_counter=FLOP_COUNTER,
        bytes_per_element=next(model.parameters()).element_size(),
        machine=measured_machine,
        split_tolerance=split_tolerance,
        threads=threads,
        cpu_count=machine.cpu_count(),
        load_before=load_before,
        load_after=machine.load_average(),
        run=run,
        contention=meter.read(),
        profile=profile,
    )
