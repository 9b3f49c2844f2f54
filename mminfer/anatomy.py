"""Where a step's time goes (issue 34), its counts: each call of forward in one generate, exact.

For step 1's generation (greedy, P prompt tokens, N new ones), with and without the cache, every
call of ``forward`` is watched (mminfer.model.wrapped_forward): the tokens it was fed, the context
its attention covered after it (past + fed), the logits rows its lm_head computed (MiniMind's
``logits_to_keep`` defaults to 0: every fed position) beside the one row ``logits_to_keep=1``
would have, and the FLOPs of its matmuls two ways: as torch's ``FlopCounterMode`` counts them and
as the formula gives them from the model's config (:func:`formula_parts`). Where the counter has
no entry for a contraction the call dispatched (CPU SDPA in torch 2.13), the op is named beside
the formula's part it computes, never a silent gap.

Second, the ops dispatched around the whole generate call (inside generate's own
inference_mode), attributed to the calls of forward or to generate's own work between them. A
backend's figure: the two backends' modules dispatch differently, so it is never compared across
them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import torch
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.flop_counter import FlopCounterMode, flop_registry

from mminfer.errors import MminferError
from mminfer.generation import GREEDY
from mminfer.model import wrapped_forward

# Ops that multiply and add over a reduced axis: a FLOP counter owes each of them a count.
CONTRACTIONS = ("aten.mm", "aten.bmm", "aten.addmm", "aten.baddbmm", "aten.convolution")
SDPA = "scaled_dot_product"  # in the name of every SDPA kernel: the attention's two matmuls
# The formula's part an uncounted contraction computes.
PART_OF_OP = {SDPA: "attention"}


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


def contraction(name: str) -> str | None:
    """What an op (its overload packet's name, "aten.mm") contracts: itself where it is one of
    CONTRACTIONS, SDPA for an SDPA kernel, None for the rest."""
    if name in CONTRACTIONS:
        return name
    if SDPA in name:
        return SDPA
    return None


class OpNames(TorchDispatchMode):
    """Counts the ops dispatched inside it, by overload packet ("aten.mm")."""

    def __init__(self):
        super().__init__()
        self.calls: Counter[str] = Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.calls[str(func.overloadpacket)] += 1
        return func(*args, **(kwargs or {}))


def uncounted(calls: Counter) -> dict[str, int]:
    """The contractions among ``calls`` that FlopCounterMode has no entry for, with their calls."""
    counted = {str(op) for op in flop_registry}
    return {
        name: n for name, n in sorted(calls.items()) if contraction(name) and name not in counted
    }


@dataclass
class Call:
    """One call of forward, counted."""

    fed: int
    context: int
    logits_rows: int
    logits_rows_keep_one: int
    flops_counted: int
    flops_formula: int
    formula_parts: dict[str, int]
    uncounted_ops: dict[str, int]  # contractions the counter has no entry for: their calls
    flops_unseen: int  # the formula's parts those ops compute (the counter's gap)


def past_length(past_key_values) -> int:
    """Cached positions, as generate reads them: the first layer's K is (b, past, kv_heads, d)."""
    return past_key_values[0][0].shape[1] if past_key_values else 0


def counted_calls(
    *, model, input_ids: torch.Tensor, new_tokens: int, use_cache: bool
) -> tuple[list[Call], torch.Tensor]:
    """Generate greedily, each call of forward under the FLOP counter and an op recorder: its
    :class:`Call`; and the ids generate returned."""
    shape = shape_of(model)
    calls: list[Call] = []

    def counting(original):
        def counted_forward(input_ids, attention_mask=None, past_key_values=None, **kwargs):
            fed = int(input_ids.shape[1])
            context = past_length(past_key_values) + fed
            counter = FlopCounterMode(display=False)
            # the recorder outside the counter: it sees the kernels the counter dispatched to
            # (CPU SDPA's flash kernel), not the composite op the counter takes apart
            with OpNames() as ops, counter:
                outputs = original(input_ids, attention_mask, past_key_values, **kwargs)
            rows = int(outputs.logits.shape[1])
            parts = formula_parts(shape, fed, context, rows)
            gaps = uncounted(ops.calls)
            unseen = {PART_OF_OP.get(contraction(name)) for name in gaps}
            calls.append(
                Call(
                    fed=fed,
                    context=context,
                    logits_rows=rows,
                    logits_rows_keep_one=1,
                    flops_counted=int(counter.get_total_flops()),
                    flops_formula=sum(parts.values()),
                    formula_parts=parts,
                    uncounted_ops=gaps,
                    flops_unseen=sum(parts.get(part, 0) for part in unseen if part),
                )
            )
            return outputs

        return counted_forward

    with wrapped_forward(model, counting):
        output = model.generate(input_ids, max_new_tokens=new_tokens, use_cache=use_cache, **GREEDY)
    return calls, output


@dataclass
class Dispatch:
    """The ops one generate call dispatched, in the calls of forward and between them."""

    in_forward: int
    between: int
    per_forward: list[int]


class AttributedOps(TorchDispatchMode):
    """Counts every op dispatched inside it, into the current call of forward or between."""

    def __init__(self):
        super().__init__()
        self.per_forward: list[int] = []
        self.between = 0
        self.inside = False

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if self.inside:
            self.per_forward[-1] += 1
        else:
            self.between += 1
        return func(*args, **(kwargs or {}))


def dispatched_ops(
    *, model, input_ids: torch.Tensor, new_tokens: int, use_cache: bool
) -> tuple[Dispatch, torch.Tensor]:
    """Generate greedily under one op counter: the ops of each call of forward and those of
    generate's own work between the calls (sampling, the cat of the ids, the streamer's none)."""
    ops = AttributedOps()

    def attributing(original):
        def attributed_forward(*args, **kwargs):
            ops.per_forward.append(0)
            ops.inside = True
            try:
                return original(*args, **kwargs)
            finally:
                ops.inside = False

        return attributed_forward

    with wrapped_forward(model, attributing), ops:
        output = model.generate(input_ids, max_new_tokens=new_tokens, use_cache=use_cache, **GREEDY)
    dispatch = Dispatch(
        in_forward=sum(ops.per_forward), between=ops.between, per_forward=ops.per_forward
    )
    return dispatch, output
