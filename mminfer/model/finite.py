"""Nothing from a broken model: weights and logits that are not finite stop the job.

A pretraining run with too high a learning rate leaves NaN in its weights; a model whose weights are
finite can still overflow (float16's largest value is 65504). Either way argmax picks token 0,
top-p keeps every token and torch's sampler stops with a message that names neither the checkpoint
nor the cause. So the weights are checked once where every job loads them
(:func:`check_weights`, from :func:`mminfer.model.loading.load_model`), and logits where they turn
into
a figure (:func:`check_logits`, :func:`finite_logits`): the job stops with one paragraph naming the
checkpoint, the first tensor or step that holds NaN or inf, before any file is written.
"""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import contextmanager

import torch

from mminfer.errors import MminferError
from mminfer.model.twin import wrapped_forward

DIVERGED_HINT = (
    "A checkpoint of a training run that diverged (a learning rate too high, a loss that went to "
    "NaN) holds such values; measure an earlier checkpoint of that run, or retrain."
)


def not_finite_counts(tensor: torch.Tensor) -> tuple[int, int]:
    """How many of the tensor's values are NaN, and how many are +-inf."""
    nan = int(torch.isnan(tensor).sum())
    inf = int(torch.isinf(tensor).sum())
    return nan, inf


def describe(tensor: torch.Tensor) -> str:
    """ "3 NaN and 1 inf of 4096 values", for a tensor known to hold some."""
    nan, inf = not_finite_counts(tensor)
    parts = []
    if nan:
        parts.append(f"{nan} NaN")
    if inf:
        parts.append(f"{inf} inf")
    return f"{' and '.join(parts)} of {tensor.numel()} values"


def first_not_finite(
    tensors: Iterable[tuple[str, torch.Tensor]],
) -> tuple[str, torch.Tensor] | None:
    """The first (name, tensor) of floating point whose values are not all finite, or None."""
    for name, tensor in tensors:
        if not torch.is_floating_point(tensor):
            continue
        if not bool(torch.isfinite(tensor).all()):
            return name, tensor
    return None


def check_weights(state: dict[str, torch.Tensor], source: str) -> None:
    """Stop when a weight of ``state`` is NaN or inf; ``source`` names the file in the message.

    One isfinite pass over each tensor: the first tensor that fails is named, with its count.
    """
    found = first_not_finite(state.items())
    if found is None:
        return
    name, tensor = found
    broken = [key for key, value in state.items() if first_not_finite([(key, value)])]
    others = ""
    if len(broken) > 1:
        others = f" ({len(broken)} of its {len(state)} tensors hold such values)"
    raise MminferError(
        f"{source}: weight {name} holds {describe(tensor)}{others}; no figure can be measured "
        f"from a model whose weights are not finite. {DIVERGED_HINT}"
    )


def check_cast_weights(model: torch.nn.Module, dtype: str, source: str) -> None:
    """Stop when casting the (finite) weights to ``dtype`` made some of them inf.

    float16 holds at most 65504; ``source`` names the checkpoint in the message.
    """
    found = first_not_finite(model.state_dict().items())
    if found is None:
        return
    name, tensor = found
    raise MminferError(
        f"{source}: weight {name} holds {describe(tensor)} once cast to {dtype} (config key "
        f"'dtype'); its values do not fit {dtype}. Use dtype float32 or bfloat16."
    )


def check_logits(logits: torch.Tensor, where: str) -> None:
    """Stop when ``logits`` hold NaN or inf; ``where`` says whose logits, at which step."""
    if bool(torch.isfinite(logits).all()):
        return
    raise MminferError(
        f"{where}: the logits hold {describe(logits)}, so no token, distribution or figure can "
        "be computed from them. With finite weights this is an overflow: try dtype float32 "
        "(config key 'dtype')."
    )


def model_named(checkpoint: str, dtype: str) -> str:
    """How a message names the model whose logits it checks: checkpoint and dtype."""
    return f"checkpoint {checkpoint} ({dtype})"


@contextmanager
def finite_logits(model, what: str):
    """Check the logits of every call of ``model.forward`` inside the ``with`` block.

    ``what`` names the model and the run (checkpoint, dtype, temperature); the message adds the
    step (the call of forward, from 1) and the tokens it was fed. Generate's sampler never sees
    a non-finite distribution: the check runs before forward returns to it.
    """
    calls = []

    def checking(original):
        def checked_forward(input_ids, *args, **kwargs):
            outputs = original(input_ids, *args, **kwargs)
            calls.append(int(input_ids.shape[1]))
            where = f"{what}, step {len(calls)} (forward fed {calls[-1]} tokens)"
            check_logits(outputs.logits[:, -1, :], where)
            return outputs

        return checked_forward

    with wrapped_forward(model, checking):
        yield
