"""Load a MiniMind checkpoint into MiniMind's own model (backend ``minimind``: ``<src>/model/model_minimind.py``,
needs transformers) or :mod:`mminfer.model` (``builtin``); ``auto`` picks ``minimind`` when its source imports.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import platform
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import torch
from safetensors.torch import load_file

from mminfer.errors import MminferError
from mminfer.inputs import input_source
from mminfer.io import atomic_writer, sha256_of
from mminfer.model import MiniMindConfig, MiniMindForCausalLM
from mminfer.records import RunInfo
from mminfer.tokenizer import Tokenizer, check_vocab_fits, load_tokenizer

log = logging.getLogger("mminfer")

BACKENDS = ("auto", "minimind", "builtin")
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


@dataclass(frozen=True)
class ModelSpec:
    """How a checkpoint is loaded: a rule's ``params.model`` (rules/common.smk); ``overrides`` is config key model."""

    backend: str = "builtin"
    minimind_src: str | None = None
    device: str = "cpu"
    dtype: str = "float32"
    overrides: dict = field(default_factory=dict)
    model_set: str = (
        "custom"  # "course", "demo", a name from config key models, or "custom" (by hand)
    )


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
    """ "float32" for torch.float32: how dtypes are written in config and JSON."""
    return str(dtype).replace("torch.", "")


def resolve_device(device: str) -> torch.device:
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cuda" and not torch.cuda.is_available():
        raise MminferError(
            "config key 'device' is 'cuda' but torch sees no CUDA device; use 'auto' or 'cpu'."
        )
    if device not in ("cpu", "cuda"):
        raise MminferError(f"config key 'device' must be one of auto, cpu, cuda; got {device!r}.")
    return torch.device(device)


def resolve_dtype(dtype: str) -> torch.dtype:
    if dtype not in DTYPES:
        raise MminferError(f"config key 'dtype' must be one of {', '.join(DTYPES)}; got {dtype!r}.")
    return DTYPES[dtype]


def read_state_dict(path: str | Path) -> dict[str, torch.Tensor]:
    """A ``.pth`` state_dict or a transformers-format folder as a flat {name: tensor} dict."""
    path = Path(path)
    if path.is_dir():
        return _read_safetensors_folder(path)
    if not path.is_file():
        raise MminferError(f"checkpoint {path} does not exist.")
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # truncated zip, pickle with code, not a torch file at all, ...
        detail = str(exc).splitlines()[0] if str(exc) else "no detail"
        message = (
            f"checkpoint {path} could not be read as a torch state_dict ({type(exc).__name__}: {detail}). "
            "Is the file truncated or not a .pth saved with torch.save(model.state_dict())?"
        )
        raise MminferError(message) from None
    if not (
        isinstance(state, dict)
        and state
        and all(isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in state.items())
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
    """model.safetensors, or pytorch_model.bin as MiniMind's convert_model.py writes it."""
    weights = folder / "model.safetensors"
    if weights.is_file():
        try:
            state = load_file(str(weights), device="cpu")
        except Exception as exc:
            raise MminferError(f"{weights} could not be read as safetensors ({exc}).") from None
    elif (folder / "pytorch_model.bin").is_file():
        state = read_state_dict(folder / "pytorch_model.bin")
    else:
        raise MminferError(
            f"model folder {folder} has neither model.safetensors nor pytorch_model.bin "
            f"(transformers format expected)."
        )
    return state


def read_folder_config(path: str | Path) -> dict:
    """config.json of a transformers-format model folder, or {} for a .pth file."""
    config_file = Path(path) / "config.json"
    if not (Path(path).is_dir() and config_file.is_file()):
        return {}
    try:
        config = json.loads(config_file.read_text(encoding="utf-8"))
        problem = None if isinstance(config, dict) else f"holds a {type(config).__name__}"
    except UnicodeDecodeError as exc:
        problem = f"is not UTF-8 text (byte {exc.start})"
    except json.JSONDecodeError as exc:
        problem = f"is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
    if problem:
        raise MminferError(
            f"model folder file {config_file} {problem}; expected a JSON object of the model's "
            "hyperparameters, as transformers' save_pretrained and MiniMind's convert_model.py "
            "write it."
        )
    return config


def infer_config(
    state: dict[str, torch.Tensor], overrides: dict | None = None, path: str | Path = ""
) -> MiniMindConfig:
    """MiniMindConfig whose shapes fit ``state``; ``overrides`` supply what the shapes cannot tell."""
    overrides = dict(overrides or {})
    if any(".mlp.gate.weight" in k or ".mlp.experts." in k for k in state):
        raise MminferError(
            f"checkpoint {path} is a MiniMind MoE model; mminfer measures the dense model only."
        )
    required = [
        "model.embed_tokens.weight",
        "model.layers.0.self_attn.q_proj.weight",
        "model.layers.0.self_attn.k_proj.weight",
        "model.layers.0.self_attn.q_norm.weight",
        "model.layers.0.mlp.gate_proj.weight",
    ]
    missing = [k for k in required if k not in state]
    if missing:
        raise MminferError(
            f"checkpoint {path} does not look like a MiniMind model; missing keys: {', '.join(missing)}."
        )
    vocab_size, hidden_size = state["model.embed_tokens.weight"].shape
    layer_ids = {int(m.group(1)) for k in state if (m := re.match(r"model\.layers\.(\d+)\.", k))}
    head_dim = state["model.layers.0.self_attn.q_norm.weight"].shape[0]
    heads = state["model.layers.0.self_attn.q_proj.weight"].shape[0] // head_dim
    kv_heads = state["model.layers.0.self_attn.k_proj.weight"].shape[0] // head_dim
    intermediate = state["model.layers.0.mlp.gate_proj.weight"].shape[0]
    from_shapes = dict(
        vocab_size=vocab_size,
        hidden_size=hidden_size,
        num_hidden_layers=max(layer_ids) + 1,
        head_dim=head_dim,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        intermediate_size=intermediate,
    )
    conflicts = [
        f"{k}={overrides[k]} but the checkpoint has {v}"
        for k, v in from_shapes.items()
        if overrides.get(k) not in (None, v)
    ]
    if conflicts:
        raise MminferError(
            f"checkpoint {path} does not fit config key 'model': {'; '.join(conflicts)}."
        )
    from_shapes["tie_word_embeddings"] = head_is_tied(
        state, overrides.get("tie_word_embeddings"), path
    )
    known = MiniMindConfig.__dataclass_fields__
    rest = {
        k: v for k, v in overrides.items() if k in known and k not in from_shapes and v is not None
    }
    return MiniMindConfig(**from_shapes, **rest)


def head_is_tied(state: dict[str, torch.Tensor], stated: bool | None, path) -> bool:
    """Does lm_head share the embedding's weight? Read off the checkpoint: a tied model's state_dict
    names the one matrix twice (equal tensors) or, in a transformers folder, once; an untied one holds
    two different matrices. ``stated``: tie_word_embeddings of a model folder's config.json, which
    must agree with the weights."""
    head = state.get("lm_head.weight")
    embedding = state.get("model.embed_tokens.weight")
    if head is None or embedding is None:
        if stated is False:
            present = "model.embed_tokens.weight" if head is None else "lm_head.weight"
            raise MminferError(
                f"checkpoint {path}: tie_word_embeddings is false but it has no "
                f"{'lm_head.weight' if head is None else 'model.embed_tokens.weight'}, "
                f"only {present}; an untied head needs both matrices."
            )
        return True
    tied = head.shape == embedding.shape and torch.equal(head, embedding)
    if stated is True and not tied:
        raise MminferError(
            f"checkpoint {path}: tie_word_embeddings is true (its config.json) but "
            "lm_head.weight differs from model.embed_tokens.weight, so the head is not "
            "tied; fix config.json or the checkpoint."
        )
    return tied if stated is None else stated


def with_both_head_keys(
    state: dict[str, torch.Tensor], config: MiniMindConfig
) -> dict[str, torch.Tensor]:
    """A tied model's state_dict names the shared matrix under both keys: fill in the one a
    transformers folder leaves out, so that the strict load sees every key."""
    if not config.tie_word_embeddings:
        return state
    shared = state.get("model.embed_tokens.weight", state.get("lm_head.weight"))
    return {**state, "model.embed_tokens.weight": shared, "lm_head.weight": shared}


def check_keys(state: dict[str, torch.Tensor], model: torch.nn.Module, path) -> None:
    """Raise one clear error listing missing, unexpected and wrongly shaped keys."""
    expected = {k: v.shape for k, v in model.state_dict().items()}
    missing = sorted(set(expected) - set(state))
    unexpected = sorted(set(state) - set(expected))
    wrong = sorted(
        f"{k} {tuple(state[k].shape)} (expected {tuple(expected[k])})"
        for k in set(expected) & set(state)
        if state[k].shape != expected[k]
    )
    parts = [
        f"{label}: "
        + ", ".join(keys[:8])
        + (f", ... ({len(keys)} in all)" if len(keys) > 8 else "")
        for label, keys in (
            ("missing", missing),
            ("unexpected", unexpected),
            ("wrong shape", wrong),
        )
        if keys
    ]
    if parts:
        raise MminferError(
            f"checkpoint {path} does not fit the MiniMind model; " + "; ".join(parts) + "."
        )


def import_minimind(source: str | Path | None):
    """Import MiniMind's model module from ``<source>/model/model_minimind.py`` (needs transformers)."""
    path = Path(source) / "model" / "model_minimind.py" if source else None
    if path is None or not path.is_file():
        raise MminferError(
            f"config key 'minimind_src': {source}/model/model_minimind.py does not exist."
        )
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


def choose_backend(backend: str, source: str | Path | None) -> str:
    if backend not in BACKENDS:
        raise MminferError(
            f"config key 'backend' must be one of {', '.join(BACKENDS)}; got {backend!r}."
        )
    if backend != "auto":
        return backend
    try:
        import_minimind(source)
    except MminferError:  # no source, or it does not import
        return "builtin"
    return "minimind"


def load_model(path: str | Path, spec: ModelSpec = ModelSpec()) -> LoadedModel:
    """The checkpoint loaded strictly into the model its shapes call for, on spec's device/dtype, in eval mode."""
    torch_device = resolve_device(spec.device)
    torch_dtype = resolve_dtype(spec.dtype)
    chosen = choose_backend(spec.backend, spec.minimind_src)
    state = read_state_dict(path)
    merged = {**read_folder_config(path), **spec.overrides}
    config = infer_config(state, merged, path)
    state = with_both_head_keys(state, config)
    if chosen == "builtin":
        model = MiniMindForCausalLM(config)
    else:
        module = import_minimind(spec.minimind_src)
        model = module.MiniMindForCausalLM(module.MiniMindConfig(**config.to_dict()))
    check_keys(state, model, path)
    model.load_state_dict(state, strict=True)
    model = model.to(device=torch_device, dtype=torch_dtype).eval()
    return LoadedModel(
        model=model,
        config=config,
        backend=chosen,
        device=torch_device,
        dtype=torch_dtype,
        path=Path(path),
        spec=spec,
    )


def save_state_dict(model: torch.nn.Module, path: str | Path) -> None:
    """Save ``model.state_dict()`` atomically, as MiniMind's trainers do (``.pth``)."""
    with atomic_writer(path, binary=True) as handle:
        torch.save({k: v.detach().cpu() for k, v in model.state_dict().items()}, handle)


def count_parameters(model: torch.nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


def open_model(checkpoint, model: ModelSpec, threads: int | None) -> LoadedModel:
    """Set torch's threads first (two 1-thread jobs must not each take every core), then load."""
    if threads:
        torch.set_num_threads(threads)
    loaded = load_model(checkpoint, model)
    config = loaded.config
    log.info(
        "loaded %s with backend %s on %s (%s), %d threads: %d layers, hidden %d, heads %d, "
        "kv heads %d, head_dim %d, vocab %d, %s head",
        checkpoint,
        loaded.backend,
        loaded.device,
        dtype_name(loaded.dtype),
        torch.get_num_threads(),
        config.num_hidden_layers,
        config.hidden_size,
        config.num_attention_heads,
        config.num_key_value_heads,
        config.head_dim,
        config.vocab_size,
        "tied" if config.tie_word_embeddings else "untied",
    )
    return loaded


def open_with_tokenizer(
    checkpoint, tokenizer, model: ModelSpec, threads: int | None, checkpoint_key: str
) -> tuple[LoadedModel, Tokenizer]:
    """The model and its tokenizer, checked to fit each other (``checkpoint_key``: "pretrain" or
    "sft", the input the checkpoint was set by)."""
    loaded = open_model(checkpoint, model, threads)
    loaded_tokenizer = load_tokenizer(tokenizer)
    check_vocab_fits(
        loaded_tokenizer,
        loaded.config.vocab_size,
        input_source(model.model_set, "tokenizer", tokenizer),
        input_source(model.model_set, checkpoint_key, checkpoint),
    )
    return loaded, loaded_tokenizer


def run_info(loaded: LoadedModel) -> RunInfo:
    """Provenance of a result: model set, checkpoint and its sha256, backend, device, versions,
    threads, and the model's every hyperparameter."""
    if loaded.device.type == "cuda":
        device_name = torch.cuda.get_device_name(loaded.device)
    else:
        device_name = "cpu"
    return RunInfo(
        model_set=loaded.spec.model_set,
        checkpoint=str(loaded.path),
        sha256=sha256_of(loaded.path),
        backend=loaded.backend,
        device=loaded.device.type,
        device_name=device_name,
        dtype=dtype_name(loaded.dtype),
        threads=torch.get_num_threads(),
        torch=torch.__version__,
        python=platform.python_version(),
        config=loaded.config.to_dict(),
    )
