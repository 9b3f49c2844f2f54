"""Load a MiniMind checkpoint into one of two interchangeable backends.

- ``minimind``: MiniMind's own ``MiniMindForCausalLM``, imported from a source folder
  (``<src>/model/model_minimind.py``; needs ``transformers``). This is "MiniMind's generate" itself.
- ``builtin``: :class:`mminfer.model.MiniMindForCausalLM`, torch only.
- ``auto``: ``minimind`` when its source imports, else ``builtin``.

Hyperparameters are read off the state_dict's shapes where they determine them; the rest comes from
``overrides`` (the config's ``model:`` section) or MiniMind's defaults.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import torch

from mminfer.errors import MminferError
from mminfer.io import atomic_writer
from mminfer.model import MiniMindConfig, MiniMindForCausalLM

BACKENDS = ("auto", "minimind", "builtin")
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}



@dataclass(frozen=True)
class ModelSpec:
    """How a checkpoint is loaded: the keys of a rule's ``params.model`` (rules/common.smk), i.e. the
    config keys backend, minimind_src, device, dtype and model (``overrides``), and the model set the
    checkpoint belongs to ("course", "demo", a name from config key ``models``, or "custom" by hand).
    The defaults are a plain CPU load with mminfer's own model (tests, demo training)."""

    backend: str = "builtin"
    minimind_src: str | None = None
    device: str = "cpu"
    dtype: str = "float32"
    overrides: dict = field(default_factory=dict)
    model_set: str = "custom"


@dataclass
class LoadedModel:
    model: torch.nn.Module
    config: MiniMindConfig
    backend: str  # "minimind" or "builtin"
    device: torch.device
    dtype: torch.dtype
    path: Path
    spec: ModelSpec


def dtype_name(dtype: torch.dtype) -> str:
    """"float32" for torch.float32: how dtypes are written in config and JSON."""
    return str(dtype).replace("torch.", "")


def resolve_device(device: str) -> torch.device:
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cuda" and not torch.cuda.is_available():
        raise MminferError("config key 'device' is 'cuda' but torch sees no CUDA device; use 'auto' or 'cpu'.")
    if device not in ("cpu", "cuda"):
        raise MminferError(f"config key 'device' must be one of auto, cpu, cuda; got {device!r}.")
    return torch.device(device)


def resolve_dtype(dtype: str) -> torch.dtype:
    if dtype not in DTYPES:
        raise MminferError(f"config key 'dtype' must be one of {', '.join(DTYPES)}; got {dtype!r}.")
    return DTYPES[dtype]


def read_state_dict(path: str | Path) -> dict[str, torch.Tensor]:
    """A checkpoint as a flat {name: tensor} dict: a ``.pth`` state_dict, or a transformers-format
    folder (config.json + model.safetensors)."""
    path = Path(path)
    if path.is_dir():
        return _read_safetensors_folder(path)
    if not path.is_file():
        raise MminferError(f"checkpoint {path} does not exist.")
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # truncated zip, pickle with code, not a torch file at all, ...
        raise MminferError(
            f"checkpoint {path} could not be read as a torch state_dict ({type(exc).__name__}: "
            f"{str(exc).splitlines()[0] if str(exc) else 'no detail'}). Is the file truncated or not a .pth "
            f"saved with torch.save(model.state_dict())?"
        ) from None
    if not isinstance(state, dict) or not state or not all(
        isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in state.items()
    ):
        hint = ""
        if isinstance(state, dict) and isinstance(state.get("model"), dict):
            hint = " It looks like a training-resume file; its 'model' entry is the state_dict."
        raise MminferError(
            f"checkpoint {path} is not a state_dict (a dict of parameter name to tensor); "
            f"got {type(state).__name__}.{hint}"
        )
    return state


def _read_safetensors_folder(folder: Path) -> dict[str, torch.Tensor]:
    """A transformers-format model folder: model.safetensors (or MiniMind's convert_model.py output,
    pytorch_model.bin, read with weights_only=True)."""
    weights = folder / "model.safetensors"
    if weights.is_file():
        try:
            from safetensors.torch import load_file
        except ImportError:
            raise MminferError(f"model folder {folder} needs the 'safetensors' package: pip install safetensors") from None
        try:
            state = load_file(str(weights), device="cpu")
        except Exception as exc:
            raise MminferError(f"{weights} could not be read as safetensors ({exc}).") from None
    elif (folder / "pytorch_model.bin").is_file():
        state = read_state_dict(folder / "pytorch_model.bin")
    else:
        raise MminferError(f"model folder {folder} has neither model.safetensors nor pytorch_model.bin "
                           f"(transformers format expected).")
    if "lm_head.weight" not in state and "model.embed_tokens.weight" in state:
        state["lm_head.weight"] = state["model.embed_tokens.weight"]  # tied weights are saved once
    return state


def read_folder_config(path: str | Path) -> dict:
    """config.json of a transformers-format model folder, or {} for a .pth file."""
    config_file = Path(path) / "config.json"
    if not (Path(path).is_dir() and config_file.is_file()):
        return {}
    expected = ("a JSON object of the model's hyperparameters, as transformers' save_pretrained and "
                "MiniMind's convert_model.py write it")
    try:
        config = json.loads(config_file.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise MminferError(f"model folder file {config_file} is not UTF-8 text (byte {exc.start}); "
                           f"expected {expected}.") from None
    except json.JSONDecodeError as exc:
        raise MminferError(f"model folder file {config_file} is not valid JSON ({exc.msg} at line {exc.lineno}, "
                           f"column {exc.colno}); expected {expected}.") from None
    if not isinstance(config, dict):
        raise MminferError(f"model folder file {config_file} holds a {type(config).__name__}; expected {expected}.")
    return config


def infer_config(state: dict[str, torch.Tensor], overrides: dict | None = None, path: str | Path = "") -> MiniMindConfig:
    """MiniMindConfig whose shapes fit ``state``; ``overrides`` supply what the shapes cannot tell."""
    overrides = dict(overrides or {})
    if any(".mlp.gate.weight" in k or ".mlp.experts." in k for k in state):
        raise MminferError(f"checkpoint {path} is a MiniMind MoE model; mminfer measures the dense model only.")
    required = ["model.embed_tokens.weight", "model.layers.0.self_attn.q_proj.weight",
                "model.layers.0.self_attn.k_proj.weight", "model.layers.0.self_attn.q_norm.weight",
                "model.layers.0.mlp.gate_proj.weight"]
    missing = [k for k in required if k not in state]
    if missing:
        raise MminferError(f"checkpoint {path} does not look like a MiniMind model; missing keys: {', '.join(missing)}.")

    vocab_size, hidden_size = state["model.embed_tokens.weight"].shape
    layer_ids = {int(m.group(1)) for k in state if (m := re.match(r"model\.layers\.(\d+)\.", k))}
    head_dim = state["model.layers.0.self_attn.q_norm.weight"].shape[0]
    heads = state["model.layers.0.self_attn.q_proj.weight"].shape[0] // head_dim
    kv_heads = state["model.layers.0.self_attn.k_proj.weight"].shape[0] // head_dim
    intermediate = state["model.layers.0.mlp.gate_proj.weight"].shape[0]
    from_shapes = dict(vocab_size=vocab_size, hidden_size=hidden_size, num_hidden_layers=max(layer_ids) + 1,
                       head_dim=head_dim, num_attention_heads=heads, num_key_value_heads=kv_heads,
                       intermediate_size=intermediate)
    conflicts = [f"{k}={overrides[k]} but the checkpoint has {v}"
                 for k, v in from_shapes.items() if overrides.get(k) not in (None, v)]
    if conflicts:
        raise MminferError(f"checkpoint {path} does not fit config key 'model': {'; '.join(conflicts)}.")
    known = set(MiniMindConfig.__dataclass_fields__) - {"extra"}
    rest = {k: v for k, v in overrides.items() if k in known and k not in from_shapes and v is not None}
    return MiniMindConfig(**from_shapes, **rest)


def check_keys(state: dict[str, torch.Tensor], model: torch.nn.Module, path) -> None:
    """Raise one clear error listing missing, unexpected and wrongly shaped keys."""
    expected = {k: v.shape for k, v in model.state_dict().items()}
    missing = sorted(set(expected) - set(state))
    unexpected = sorted(set(state) - set(expected))
    wrong = sorted(f"{k} {tuple(state[k].shape)} (expected {tuple(expected[k])})"
                   for k in set(expected) & set(state) if state[k].shape != expected[k])
    if missing or unexpected or wrong:
        parts = []
        for label, keys in (("missing", missing), ("unexpected", unexpected), ("wrong shape", wrong)):
            if keys:
                shown = ", ".join(keys[:8]) + (f", ... ({len(keys)} in all)" if len(keys) > 8 else "")
                parts.append(f"{label}: {shown}")
        raise MminferError(f"checkpoint {path} does not fit the MiniMind model; " + "; ".join(parts) + ".")


def minimind_source_file(source: str | Path | None) -> Path | None:
    if not source:
        return None
    candidate = Path(source) / "model" / "model_minimind.py"
    return candidate if candidate.is_file() else None


def import_minimind(source: str | Path):
    """Import MiniMind's model module from ``<source>/model/model_minimind.py`` (needs transformers)."""
    path = minimind_source_file(source)
    if path is None:
        raise MminferError(f"config key 'minimind_src': {source}/model/model_minimind.py does not exist.")
    name = "_mminfer_minimind_model"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except ImportError as exc:
        raise MminferError(
            f"MiniMind's source {path} could not be imported ({exc}); install the optional extra "
            f"(pip install 'mminfer[minimind]') or set config key 'backend' to 'builtin'."
        ) from None
    sys.modules[name] = module
    return module


def minimind_importable(source: str | Path | None) -> bool:
    if minimind_source_file(source) is None:
        return False
    try:
        import_minimind(source)
    except MminferError:
        return False
    return True


def choose_backend(backend: str, source: str | Path | None) -> str:
    if backend not in BACKENDS:
        raise MminferError(f"config key 'backend' must be one of {', '.join(BACKENDS)}; got {backend!r}.")
    if backend == "auto":
        return "minimind" if minimind_importable(source) else "builtin"
    return backend


def build_model(config: MiniMindConfig, backend: str, source: str | Path | None = None) -> torch.nn.Module:
    if backend == "builtin":
        return MiniMindForCausalLM(config)
    module = import_minimind(source)
    mm_config = module.MiniMindConfig(**config.to_dict())
    return module.MiniMindForCausalLM(mm_config)


def load_model(path: str | Path, spec: ModelSpec = ModelSpec()) -> LoadedModel:
    """Read the checkpoint, build the model its shapes call for, load it strictly, move it to the
    spec's device and dtype and switch it to eval mode."""
    torch_device = resolve_device(spec.device)
    torch_dtype = resolve_dtype(spec.dtype)
    chosen = choose_backend(spec.backend, spec.minimind_src)
    state = read_state_dict(path)
    merged = {**read_folder_config(path), **spec.overrides}
    config = infer_config(state, merged, path)
    model = build_model(config, chosen, spec.minimind_src)
    check_keys(state, model, path)
    model.load_state_dict(state, strict=True)
    model = model.to(device=torch_device, dtype=torch_dtype).eval()
    return LoadedModel(model=model, config=config, backend=chosen, device=torch_device, dtype=torch_dtype,
                       path=Path(path), spec=spec)


def save_state_dict(model: torch.nn.Module, path: str | Path) -> None:
    """Save ``model.state_dict()`` atomically, as MiniMind's trainers do (``.pth``)."""
    with atomic_writer(path, binary=True) as handle:
        torch.save({k: v.detach().cpu() for k, v in model.state_dict().items()}, handle)


def count_parameters(model: torch.nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())
