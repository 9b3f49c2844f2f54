"""Load a MiniMind checkpoint into a model: MiniMind's own or mminfer's twin.

Backend ``minimind`` imports ``MiniMindForCausalLM`` from ``<minimind_src>/model/model_minimind.py``
(it needs transformers); ``builtin`` is :mod:`mminfer.model.twin`; ``auto`` picks ``minimind`` when
its
source imports. Either way the model is built from the config the checkpoint calls for
(:mod:`mminfer.model.checkpoints`), loaded strictly, given the SFT model's LoRA if there is one,
cast to
the dtype, and put in eval mode. The helpers at the end open a model for a job (with its tokenizer
and the prompt it measures) and say where it came from (:func:`run_info`).
"""

from __future__ import annotations

import logging
import platform
from dataclasses import dataclass, field
from pathlib import Path

import torch

from mminfer.errors import MminferError, input_source
from mminfer.io import atomic_writer, sha256_of
from mminfer.model import lora as lora_module
from mminfer.model.checkpoints import (
    check_keys,
    infer_config,
    read_folder_config,
    read_state_dict,
    with_both_head_keys,
)
from mminfer.model.draws import Prompted
from mminfer.model.finite import check_cast_weights, check_logits, check_weights, model_named
from mminfer.model.minimind import import_source
from mminfer.model.prompts import chat_prompt, task_prompt
from mminfer.model.tokenizer import TOKENIZER_FILES, Tokenizer, check_vocab_fits, load_tokenizer
from mminfer.model.twin import MiniMindConfig, MiniMindForCausalLM
from mminfer.records import ChatPrompt, LoraInfo, PretrainPrompt, RunInfo

log = logging.getLogger("mminfer")

BACKENDS = ("auto", "minimind", "builtin")
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


@dataclass(frozen=True)
class ModelSpec:
    """How a checkpoint is loaded: a rule's ``params.model`` (rules/common.smk).

    ``overrides`` is config key ``model``; ``model_set`` names where the inputs came from:
    "course", "demo", a name from config key models, or "custom" (a script run by hand).
    """

    backend: str = "builtin"
    minimind_src: str | None = None
    device: str = "cpu"
    dtype: str = "float32"
    overrides: dict = field(default_factory=dict)
    model_set: str = "custom"


@dataclass(frozen=True)
class ModelSource:
    """The checkpoint a job opens, and how: a rule's checkpoint input with its ``params.model``.

    ``input_key`` is the input that named the checkpoint ("pretrain" or "sft"), for messages;
    ``threads`` is torch's CPU threads (None: leave torch's choice); ``lora`` is the SFT model's
    LoRA file (config key sft_lora), or None.
    """

    checkpoint: str | Path
    spec: ModelSpec
    threads: int | None
    input_key: str = "pretrain"
    lora: str | Path | None = None


@dataclass
class LoadedModel:
    model: torch.nn.Module
    config: MiniMindConfig
    backend: str  # "minimind" or "builtin"
    device: torch.device
    dtype: torch.dtype
    path: Path
    spec: ModelSpec
    lora: LoraInfo | None = None
    # Every input file the job read, in order: the checkpoint, its LoRA, the tokenizer's two
    # files, the validation file (run_info records each one's sha256).
    files: list[Path] = field(default_factory=list)


def dtype_name(dtype: torch.dtype) -> str:
    """How dtypes are written in config and JSON: "float32" for torch.float32."""
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


# --- backends ------------------------------------------------------------------------------------


def import_minimind(source: str | Path | None):
    """MiniMind's model module, ``<source>/model/model_minimind.py`` (needs transformers)."""
    return import_source(source, "model_minimind")


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


def build_model(config: MiniMindConfig, backend: str, minimind_src) -> torch.nn.Module:
    """An untrained model of ``config`` in the chosen backend."""
    if backend == "builtin":
        return MiniMindForCausalLM(config)
    module = import_minimind(minimind_src)
    settings = config.to_dict()
    del settings["rope_scaling"]  # MiniMind's config sets it from inference_rope_scaling
    return module.MiniMindForCausalLM(module.MiniMindConfig(**settings))


# --- loading -------------------------------------------------------------------------------------


def load_model(
    path: str | Path,
    spec: ModelSpec = ModelSpec(),
    lora: str | Path | None = None,
    named: str | None = None,
) -> LoadedModel:
    """The checkpoint loaded strictly into the model its shapes call for.

    The LoRA file ``lora`` is applied when given; the model is put on spec's device and dtype, in
    eval mode. Every weight must be finite, in the file and in the dtype
    (:mod:`mminfer.model.finite`);
    ``named`` says where the user set the checkpoint, for that message (default: its path).
    """
    torch_device = resolve_device(spec.device)
    torch_dtype = resolve_dtype(spec.dtype)
    backend = choose_backend(spec.backend, spec.minimind_src)
    if named is None:
        named = f"checkpoint {path}"
    state = read_state_dict(path)
    check_weights(state, named)
    config = infer_config(state, read_folder_config(path), spec.overrides, path)
    if config.use_moe and config.num_experts_per_tok > config.num_experts:
        raise MminferError(
            f"checkpoint {path} has {config.num_experts} experts per layer but config key "
            f"'model.num_experts_per_tok' asks for {config.num_experts_per_tok}."
        )
    state = with_both_head_keys(state, config)
    model = build_model(config, backend, spec.minimind_src)
    check_keys(state, model, path)
    model.load_state_dict(state, strict=True)
    info = None
    if lora is not None:
        source = input_source(spec.model_set, "sft_lora", lora)
        weights = lora_module.read_lora(lora, source)
        check_weights(lora_module.flat_weights(weights), f"{source} (the SFT model's LoRA)")
        lora_module.apply(weights, model, backend, spec.minimind_src, source)
        info = lora_module.lora_info(weights)
    model = model.to(device=torch_device, dtype=torch_dtype).eval()
    if torch_dtype != torch.float32:  # finite in the file, yet past what the dtype holds?
        check_cast_weights(model, spec.dtype, named)
    return LoadedModel(
        model=model,
        config=config,
        backend=backend,
        device=torch_device,
        dtype=torch_dtype,
        path=Path(path),
        spec=spec,
        lora=info,
        files=[Path(path)] if lora is None else [Path(path), Path(lora)],
    )


def save_state_dict(model: torch.nn.Module, path: str | Path) -> None:
    """Save ``model.state_dict()`` atomically, as MiniMind's trainers do (``.pth``)."""
    with atomic_writer(path, binary=True) as handle:
        state = {k: v.detach().cpu() for k, v in model.state_dict().items()}
        torch.save(state, handle)


def count_parameters(model: torch.nn.Module) -> int:
    """Every weight once (a tied embedding once, every expert, a LoRA's pairs)."""
    return sum(p.numel() for p in model.parameters())


def active_parameters(model: torch.nn.Module, config: MiniMindConfig) -> int:
    """The weights one token runs through: a MoE layer runs num_experts_per_tok of its experts."""
    total = count_parameters(model)
    if not config.use_moe:
        return total
    idle = config.num_experts - config.num_experts_per_tok
    for layer in model.model.layers:
        per_expert = sum(p.numel() for p in layer.mlp.experts[0].parameters())
        total -= idle * per_expert
    return total


# --- opening a model for a job -------------------------------------------------------------------


def open_model(source: ModelSource) -> LoadedModel:
    """Set torch's threads first (two 1-thread jobs must not each take every core), then load."""
    if source.threads:
        torch.set_num_threads(source.threads)
    named = input_source(source.spec.model_set, source.input_key, source.checkpoint)
    loaded = load_model(source.checkpoint, source.spec, source.lora, named)
    config = loaded.config
    architecture = "dense"
    if config.use_moe:
        architecture = f"MoE, {config.num_experts_per_tok} of {config.num_experts} experts"
    log.info(
        "loaded %s with backend %s on %s (%s), %d threads: %d layers, hidden %d, heads %d, "
        "kv heads %d, head_dim %d, vocab %d, %s, %s head, rope scaling %s, LoRA %s",
        source.checkpoint,
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
        architecture,
        "tied" if config.tie_word_embeddings else "untied",
        config.rope_scaling,
        loaded.lora,
    )
    return loaded


def open_with_tokenizer(source: ModelSource, tokenizer) -> tuple[LoadedModel, Tokenizer]:
    """The model and its tokenizer (a folder), checked to fit each other."""
    loaded = open_model(source)
    loaded_tokenizer = load_tokenizer(tokenizer)
    loaded.files += [Path(tokenizer) / name for name in TOKENIZER_FILES]
    check_vocab_fits(
        loaded_tokenizer,
        loaded.config.vocab_size,
        input_source(source.spec.model_set, "tokenizer", tokenizer),
        input_source(source.spec.model_set, source.input_key, source.checkpoint),
    )
    return loaded, loaded_tokenizer


def open_for_task_prompt(
    model: ModelSource, prompt: PretrainPrompt, new_tokens: int, keys: str
) -> tuple[LoadedModel, Tokenizer, list[int]]:
    """The pretrained model, its tokenizer and the token ids of the task's greedy prompt.

    The prompt must leave room for ``new_tokens`` in the model's positions; ``keys`` names the
    config keys that asked for them. The logits are not checked here: a job that keeps none
    calls :func:`check_prompt_logits` (greedy.compare_cache checks its own at every step).
    """
    loaded, loaded_tokenizer = open_with_tokenizer(model, prompt.tokenizer)
    prompt_ids = task_prompt(
        loaded_tokenizer,
        prompt.val_data,
        prompt.docs,
        prompt.prompt_tokens,
        new_tokens,
        loaded.config.max_position_embeddings,
        keys,
    )
    loaded.files.append(Path(prompt.val_data))
    return loaded, loaded_tokenizer, prompt_ids


@torch.inference_mode()
def check_prompt_logits(loaded: LoadedModel, prompt_ids: list[int]) -> None:
    """Stop unless the logits after the prompt are finite: one forward, before anything is timed.

    Only the timing jobs (time, sweep, serve) call it: they keep no logits, so a model that
    overflows in its dtype would otherwise be timed as if it worked.
    """
    input_ids = torch.tensor([prompt_ids], dtype=torch.long, device=loaded.device)
    logits = loaded.model(input_ids).logits[0, -1, :]
    where = f"{model_named(str(loaded.path), dtype_name(loaded.dtype))}, after the task's prompt"
    check_logits(logits, where)


def open_for_chat(
    model: ModelSource, tokenizer, question: str, seed: int, chatml_fallback: bool
) -> tuple[LoadedModel, Tokenizer, list[int], ChatPrompt]:
    """The SFT model (with its LoRA, if any), its tokenizer, the chat prompt's ids and its record.

    The record says where the prompt came from: the tokenizer, its chat template, the question.
    """
    loaded, loaded_tokenizer = open_with_tokenizer(model, tokenizer)
    prompt_ids, template = chat_prompt(loaded_tokenizer, question, chatml_fallback)
    prompt = ChatPrompt(
        tokenizer=str(tokenizer),
        template=template,
        question=question,
        prompt_len=len(prompt_ids),
        seed=seed,
    )
    return loaded, loaded_tokenizer, prompt_ids, prompt


def prompted(loaded: LoadedModel, tokenizer, prompt_ids: list[int], prompt) -> Prompted:
    """The model opened on its prompt, with its provenance: what a sampling measurement takes."""
    return Prompted(
        model=loaded.model,
        tokenizer=tokenizer,
        prompt_ids=prompt_ids,
        prompt=prompt,
        device=loaded.device,
        run=run_info(loaded),
    )


def run_info(loaded: LoadedModel) -> RunInfo:
    """Provenance of a result: which model, loaded how, measured where.

    The model set, the checkpoint and its sha256, every input file the job read and its sha256,
    the backend, device, versions and threads, the model's every hyperparameter, its parameters
    and its LoRA.
    """
    inputs = {str(path): sha256_of(path) for path in loaded.files}
    if loaded.device.type == "cuda":
        device_name = torch.cuda.get_device_name(loaded.device)
    else:
        device_name = "cpu"
    return RunInfo(
        model_set=loaded.spec.model_set,
        checkpoint=str(loaded.path),
        sha256=inputs[str(loaded.path)],
        inputs=inputs,
        backend=loaded.backend,
        device=loaded.device.type,
        device_name=device_name,
        dtype=dtype_name(loaded.dtype),
        threads=torch.get_num_threads(),
        torch=torch.__version__,
        python=platform.python_version(),
        config=loaded.config.to_dict(),
        parameters=count_parameters(loaded.model),
        active_parameters=active_parameters(loaded.model, loaded.config),
        lora=loaded.lora,
    )
