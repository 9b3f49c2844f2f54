"""A LoRA on the SFT model, as MiniMind's eval_llm.py --lora_weight applies it.

MiniMind's ``model/model_lora.py``: ``apply_lora`` gives every square ``nn.Linear`` (in_features ==
out_features) a rank-r pair A (r, n), B (n, r), and the layer's forward becomes
``layer(x) + B(A(x))``, unmerged; ``save_lora`` writes ``<module>.lora.A.weight`` and
``<module>.lora.B.weight`` in half precision; ``load_lora`` reads them back by module name. Here the
file is read with ``weights_only=True``, its rank read off the shapes, and checked to fit the model
(every square layer has its pair, no pair names another layer) before it is applied, in the
backend's own way: mminfer's :func:`mminfer.model.twin.apply_lora`, or MiniMind's own
``apply_lora``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from mminfer.errors import MminferError
from mminfer.io import sha256_of
from mminfer.model import twin as builtin_model
from mminfer.model.checkpoints import is_state_dict
from mminfer.model.minimind import import_source
from mminfer.model.twin import square_linears
from mminfer.records import LoraInfo

KEY = re.compile(r"^(?P<module>.+)\.lora\.(?P<part>A|B)\.weight$")


@dataclass
class LoraWeights:
    """The pairs of one LoRA file: module name -> {"A": tensor, "B": tensor}, and its rank."""

    path: Path
    pairs: dict[str, dict[str, torch.Tensor]]
    rank: int


def read_lora(path: str | Path, source: str) -> LoraWeights:
    """Read a LoRA file as MiniMind's save_lora writes it.

    A "module." prefix of DDP is dropped, as load_lora drops it. ``source`` says where the user set
    the file, for the messages.
    """
    path = Path(path)
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:
        raise MminferError(
            f"{source}: the LoRA file could not be read as a torch state_dict "
            f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else 'no detail'})."
        ) from None
    if not is_state_dict(state):
        raise MminferError(
            f"{source}: the LoRA file is not a state_dict of <module>.lora.A.weight and "
            f"<module>.lora.B.weight tensors (as MiniMind's save_lora writes it)."
        )
    pairs: dict[str, dict[str, torch.Tensor]] = {}
    for key, tensor in state.items():
        name = key[len("module.") :] if key.startswith("module.") else key
        match = KEY.match(name)
        if match is None:
            raise MminferError(
                f"{source}: key {key!r} is not a LoRA weight (<module>.lora.A.weight or "
                "<module>.lora.B.weight, as MiniMind's save_lora writes them)."
            )
        pairs.setdefault(match["module"], {})[match["part"]] = tensor
    ranks = set()
    for module, pair in pairs.items():
        if set(pair) != {"A", "B"}:
            raise MminferError(f"{source}: module {module} has only lora.{''.join(pair)}.weight.")
        ranks.add(pair["A"].shape[0])
    if len(ranks) != 1:
        raise MminferError(
            f"{source}: the modules' LoRA ranks differ ({sorted(ranks)}); MiniMind's apply_lora "
            "gives every layer one rank."
        )
    return LoraWeights(path=path, pairs=pairs, rank=ranks.pop())


def check_fits(lora: LoraWeights, model: nn.Module, source: str) -> None:
    """Check that every pair names a square linear layer of the model, with its shapes.

    Every such layer must have a pair, too: MiniMind's load_lora loads each strictly.
    """
    square = square_linears(model)
    for module, pair in lora.pairs.items():
        if module not in square:
            raise MminferError(
                f"{source}: {module}.lora.A.weight names {module}, which is not a square linear "
                "layer of the model (MiniMind puts a LoRA on every nn.Linear whose in_features "
                f"equal its out_features: {', '.join(list(square)[:4])}, ...)."
            )
        features = square[module].in_features
        expected = {"A": (lora.rank, features), "B": (features, lora.rank)}
        for part in ("A", "B"):
            if tuple(pair[part].shape) != expected[part]:
                raise MminferError(
                    f"{source}: {module}.lora.{part}.weight has shape {tuple(pair[part].shape)}; "
                    f"the model's {module} ({features} x {features}) at rank {lora.rank} needs "
                    f"{expected[part]}."
                )
    without = [name for name in square if name not in lora.pairs]
    if without:
        raise MminferError(
            f"{source}: the model's square linear layer {without[0]} has no LoRA in the file "
            f"({len(without)} of {len(square)} have none); MiniMind's load_lora needs one for "
            "every layer apply_lora gives one."
        )


def apply(lora: LoraWeights, model: nn.Module, backend: str, minimind_src, source: str) -> None:
    """Give ``model`` the file's LoRA, unmerged, in the backend's own way.

    Then the pairs are loaded into it as load_lora does: module by module, strictly.
    """
    check_fits(lora, model, source)
    if backend == "minimind":
        import_source(minimind_src, "model_lora").apply_lora(model, rank=lora.rank)
    else:
        builtin_model.apply_lora(model, lora.rank)
    for name, module in model.named_modules():
        if name in lora.pairs:
            pair = lora.pairs[name]
            module.lora.load_state_dict({"A.weight": pair["A"], "B.weight": pair["B"]})


def flat_weights(lora: LoraWeights) -> dict[str, torch.Tensor]:
    """The file's tensors by their names, <module>.lora.A.weight and <module>.lora.B.weight."""
    flat = {}
    for module, pair in lora.pairs.items():
        for part, tensor in pair.items():
            flat[f"{module}.lora.{part}.weight"] = tensor
    return flat


def lora_info(lora: LoraWeights) -> LoraInfo:
    parameters = sum(t.numel() for pair in lora.pairs.values() for t in pair.values())
    return LoraInfo(
        path=str(lora.path),
        sha256=sha256_of(lora.path),
        rank=lora.rank,
        modules=len(lora.pairs),
        parameters=parameters,
    )
