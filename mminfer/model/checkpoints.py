"""What a MiniMind checkpoint says about its model: the weights, and the config they call for.

A checkpoint is a ``.pth`` state_dict (as MiniMind's trainers save it) or a transformers-format
folder (``config.json`` with ``model.safetensors``, or the ``pytorch_model.bin`` of MiniMind's
convert_model.py). The shapes tell the architecture: vocabulary, width, layers, heads (via
q_norm's head_dim), KV heads, the MLP's width, or the experts and their width for a MoE model,
and whether the output head is tied to the embedding. What the shapes cannot tell (the rotary
base and table length, YaRN, how many experts a token uses) comes from config key ``model`` or
the folder's config.json, else MiniMind's defaults; anything else there that would change the
numbers and that mminfer cannot honour is refused, never dropped.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import torch
from safetensors.torch import load_file

from mminfer.errors import MminferError
from mminfer.model.twin import MINIMIND_YARN, MiniMindConfig

# The keys of a YaRN rope_scaling that MiniMind's precompute_freqs_cis reads; "type" /
# "rope_type" name it, and transformers 5 adds "rope_theta" beside them.
YARN_KEYS = {
    "beta_fast",
    "beta_slow",
    "factor",
    "original_max_position_embeddings",
    "attention_factor",
    "type",
    "rope_type",
    "rope_theta",
}


# --- reading -------------------------------------------------------------------------------------


def read_state_dict(path: str | Path) -> dict[str, torch.Tensor]:
    """A ``.pth`` state_dict or a transformers-format folder as a flat {name: tensor} dict."""
    path = Path(path)
    if path.is_dir():
        return read_model_folder(path)
    if not path.is_file():
        raise MminferError(f"checkpoint {path} does not exist.")
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # truncated zip, pickle with code, not a torch file at all, ...
        detail = str(exc).splitlines()[0] if str(exc) else "no detail"
        raise MminferError(
            f"checkpoint {path} could not be read as a torch state_dict "
            f"({type(exc).__name__}: {detail}). Is the file truncated or not a .pth saved with "
            "torch.save(model.state_dict())?"
        ) from None
    if not is_state_dict(state):
        hint = ""
        if isinstance(state, dict) and isinstance(state.get("model"), dict):
            hint = " It looks like a training-resume file; its 'model' entry is the state_dict."
        raise MminferError(
            f"checkpoint {path} is not a state_dict (a dict of parameter name to tensor); "
            f"got {type(state).__name__}.{hint}"
        )
    return state


def is_state_dict(state) -> bool:
    if not isinstance(state, dict) or not state:
        return False
    return all(isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in state.items())


def read_model_folder(folder: Path) -> dict[str, torch.Tensor]:
    """model.safetensors, or pytorch_model.bin as MiniMind's convert_model.py writes it."""
    weights = folder / "model.safetensors"
    if weights.is_file():
        try:
            return load_file(str(weights), device="cpu")
        except Exception as exc:
            raise MminferError(f"{weights} could not be read as safetensors ({exc}).") from None
    if (folder / "pytorch_model.bin").is_file():
        return read_state_dict(folder / "pytorch_model.bin")
    raise MminferError(
        f"model folder {folder} has neither model.safetensors nor pytorch_model.bin "
        "(transformers format expected)."
    )


def read_folder_config(path: str | Path) -> dict:
    """config.json of a transformers-format model folder, or {} for a .pth file."""
    config_file = Path(path) / "config.json"
    if not (Path(path).is_dir() and config_file.is_file()):
        return {}
    problem = None
    try:
        config = json.loads(config_file.read_text(encoding="utf-8"))
        if not isinstance(config, dict):
            problem = f"holds a {type(config).__name__}"
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


# --- the config the weights call for -------------------------------------------------------------


def numbers_in_keys(state: dict[str, torch.Tensor], pattern: str) -> set[int]:
    """The numbers that ``pattern``'s one group matches at the start of the state_dict's keys."""
    numbers = set()
    for key in state:
        match = re.match(pattern, key)
        if match:
            numbers.add(int(match.group(1)))
    return numbers


def layer_count(state: dict[str, torch.Tensor]) -> int:
    """The blocks of the checkpoint (model.layers.<i>.*)."""
    return max(numbers_in_keys(state, r"model\.layers\.(\d+)\.")) + 1


def expert_count(state: dict[str, torch.Tensor]) -> int:
    """The experts of layer 0 of a MoE checkpoint (model.layers.0.mlp.experts.<i>.*)."""
    return len(numbers_in_keys(state, r"model\.layers\.0\.mlp\.experts\.(\d+)\."))


def shape_config(state: dict[str, torch.Tensor], path) -> dict:
    """Every hyperparameter the shapes tell: MiniMindConfig's fields, by name."""
    moe = "model.layers.0.mlp.gate.weight" in state
    mlp = "model.layers.0.mlp.experts.0" if moe else "model.layers.0.mlp"
    required = [
        "model.embed_tokens.weight",
        "model.layers.0.self_attn.q_proj.weight",
        "model.layers.0.self_attn.k_proj.weight",
        "model.layers.0.self_attn.q_norm.weight",
        f"{mlp}.gate_proj.weight",
    ]
    missing = [key for key in required if key not in state]
    if missing:
        raise MminferError(
            f"checkpoint {path} does not look like a MiniMind model; missing keys: "
            f"{', '.join(missing)}."
        )
    vocab_size, hidden_size = state["model.embed_tokens.weight"].shape
    head_dim = state["model.layers.0.self_attn.q_norm.weight"].shape[0]
    shapes = {
        "vocab_size": vocab_size,
        "hidden_size": hidden_size,
        "num_hidden_layers": layer_count(state),
        "head_dim": head_dim,
        "num_attention_heads": state["model.layers.0.self_attn.q_proj.weight"].shape[0] // head_dim,
        "num_key_value_heads": state["model.layers.0.self_attn.k_proj.weight"].shape[0] // head_dim,
        "use_moe": moe,
    }
    width = state[f"{mlp}.gate_proj.weight"].shape[0]
    if moe:
        shapes["num_experts"] = expert_count(state)
        shapes["moe_intermediate_size"] = width
    else:
        shapes["intermediate_size"] = width
    return shapes


def head_is_tied(state: dict[str, torch.Tensor], stated: bool | None, path) -> bool:
    """Does lm_head share the embedding's weight?

    Read off the checkpoint: a tied model's state_dict names the one matrix twice (equal
    tensors) or, in a transformers folder, once; an untied one holds two different matrices.
    ``stated``: tie_word_embeddings of a model folder's config.json, which must agree.
    """
    head = state.get("lm_head.weight")
    embedding = state.get("model.embed_tokens.weight")
    if head is None or embedding is None:
        if stated is False:
            if head is None:
                absent, present = "lm_head.weight", "model.embed_tokens.weight"
            else:
                absent, present = "model.embed_tokens.weight", "lm_head.weight"
            raise MminferError(
                f"checkpoint {path}: tie_word_embeddings is false but it has no {absent}, only "
                f"{present}; an untied head needs both matrices."
            )
        return True
    tied = head.shape == embedding.shape and torch.equal(head, embedding)
    if stated is True and not tied:
        raise MminferError(
            f"checkpoint {path}: tie_word_embeddings is true (its config.json) but "
            "lm_head.weight differs from model.embed_tokens.weight, so the head is not tied; "
            "fix config.json or the checkpoint."
        )
    if stated is None:
        return tied
    return stated


def check_minimind_yarn(scaling: dict, rope_theta: float, source: str) -> None:
    """Stop unless ``scaling`` is YaRN exactly as MiniMind builds it for inference_rope_scaling.

    MiniMind's config sets rope_scaling from that one switch (factor 16 over 2048 original
    positions, beta_fast 32, beta_slow 1, attention_factor 1.0) and ignores any other; measuring
    another YaRN would give figures no MiniMind model gives. A key MiniMind's
    precompute_freqs_cis does not read (mscale, truncate, ...) is refused too.
    """
    kind = scaling.get("rope_type", scaling.get("type"))
    unknown = sorted(set(scaling) - YARN_KEYS)
    values = {key: value for key, value in MINIMIND_YARN.items() if key != "type"}
    differ = [key for key, value in values.items() if scaling.get(key, value) != value]
    if kind == "yarn" and not unknown and not differ:
        if scaling.get("rope_theta", rope_theta) != rope_theta:
            raise MminferError(
                f"{source}: rope_theta {scaling['rope_theta']} inside rope_scaling differs from "
                f"the model's rope_theta {rope_theta}."
            )
        return
    if unknown:
        why = f"its keys {unknown} are not MiniMind's"
    elif kind != "yarn":
        why = f"its type is {kind!r}"
    else:
        why = f"its {', '.join(differ)} differ from MiniMind's {values}"
    raise MminferError(
        f"{source}: rope_scaling {scaling} is not MiniMind's YaRN ({why}). MiniMind's config "
        "builds its rope scaling from inference_rope_scaling alone, so mminfer measures no "
        "scaling, or MiniMind's YaRN (config key model.inference_rope_scaling)."
    )


def rope_settings(folder_config: dict, model_key: dict, rope_theta: float, path) -> dict:
    """inference_rope_scaling and rope_scaling of the model, as MiniMind decides them.

    Config key model.inference_rope_scaling decides when it is set (true: MiniMind's YaRN, as
    eval_llm.py --inference_rope_scaling builds it). Otherwise the folder's config.json: its
    inference_rope_scaling, or a rope_scaling that is MiniMind's YaRN (honoured, never dropped);
    any other rope_scaling, or transformers 5's rope_parameters with another rope_theta, is
    refused.
    """
    source = f"model folder {path}: config.json"
    yarn_in_folder = False
    for key in ("rope_scaling", "rope_parameters"):
        scaling = folder_config.get(key)
        if not scaling:
            continue
        if not isinstance(scaling, dict):
            raise MminferError(f"{source}: {key} must be an object or null; got {scaling!r}.")
        kind = scaling.get("rope_type", scaling.get("type"))
        if kind == "default" and set(scaling) <= {"rope_type", "type", "rope_theta"}:
            if scaling.get("rope_theta", rope_theta) != rope_theta:
                raise MminferError(
                    f"{source}: {key} says rope_theta {scaling['rope_theta']} but the model "
                    f"would run with {rope_theta}; set config key model.rope_theta."
                )
            continue  # transformers 5's rope_parameters of a model without scaling
        check_minimind_yarn(scaling, rope_theta, f"{source} {key}")
        yarn_in_folder = True
    if model_key.get("inference_rope_scaling") is not None:
        on = bool(model_key["inference_rope_scaling"])
    else:
        on = yarn_in_folder or bool(folder_config.get("inference_rope_scaling"))
    return {"inference_rope_scaling": on, "rope_scaling": dict(MINIMIND_YARN) if on else None}


def infer_config(
    state: dict[str, torch.Tensor],
    folder_config: dict | None = None,
    model_key: dict | None = None,
    path: str | Path = "",
) -> MiniMindConfig:
    """The MiniMindConfig whose shapes fit ``state``.

    Config key model (``model_key``) and the folder's config.json supply what the shapes cannot
    tell; the key wins.
    """
    folder_config = folder_config or {}
    model_key = model_key or {}
    given = {**folder_config, **model_key}
    shapes = shape_config(state, path)
    conflicts = []
    for key, value in shapes.items():
        if given.get(key) not in (None, value):
            conflicts.append(f"{key}={given[key]} but the checkpoint has {value}")
    if conflicts:
        raise MminferError(
            f"checkpoint {path} does not fit config key 'model': {'; '.join(conflicts)}."
        )
    if given.get("hidden_act", "silu") != "silu":
        raise MminferError(
            f"checkpoint {path}: hidden_act {given['hidden_act']!r}; MiniMind's models use silu."
        )
    shapes["tie_word_embeddings"] = head_is_tied(state, given.get("tie_word_embeddings"), path)
    known = MiniMindConfig.__dataclass_fields__
    settled = set(shapes) | {"inference_rope_scaling", "rope_scaling"}
    rest = {}
    for key, value in given.items():
        if key in known and key not in settled and value is not None:
            rest[key] = value
    rope_theta = rest.get("rope_theta", MiniMindConfig.rope_theta)
    rope = rope_settings(folder_config, model_key, rope_theta, path)
    return MiniMindConfig(**shapes, **rope, **rest)


def with_both_head_keys(state: dict[str, torch.Tensor], config: MiniMindConfig) -> dict:
    """A tied model's state_dict, with the shared matrix under both of its keys.

    A transformers folder saves it once; the other key is filled in so that the strict load sees
    every key.
    """
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
    parts = []
    for label, keys in (("missing", missing), ("unexpected", unexpected), ("wrong shape", wrong)):
        if not keys:
            continue
        listed = ", ".join(keys[:8])
        if len(keys) > 8:
            listed += f", ... ({len(keys)} in all)"
        parts.append(f"{label}: {listed}")
    if parts:
        raise MminferError(
            f"checkpoint {path} does not fit the MiniMind model; " + "; ".join(parts) + "."
        )
