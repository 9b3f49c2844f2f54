"""MiniMind models of every kind for the generate-knob tests (top-k, repetition penalty, padded
batches): MiniMind's own model, built and saved as its trainers do, and the files loaded in both of
mminfer's backends. Small (hidden 64, 2 layers; "course": the course model's shape) with MiniMind's
vocabulary, the embedding spread so that greedy steps have clear winners."""

from __future__ import annotations

import sys

import torch

from mminfer.model.loading import ModelSpec, load_model

SHAPE = {
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "vocab_size": 6400,
    "max_position_embeddings": 512,
}
MINIMIND_3 = {"hidden_size": 768, "num_hidden_layers": 8}  # minimind-3: MiniMind's defaults,
MINIMIND_3 |= {"num_attention_heads": 8, "num_key_value_heads": 4}  # 8 heads over 4 KV heads
# name: (MiniMind's switches, mminfer's config key model, a LoRA on it)
KINDS = {
    "dense": ({}, {}, False),
    "moe": ({"use_moe": True}, {}, False),
    "lora": ({}, {}, True),
    "yarn": ({"inference_rope_scaling": True}, {"inference_rope_scaling": True}, False),
    "course": (  # the course model's shape (hidden 256, 4 layers, 8 heads, 2 KV heads)
        {"hidden_size": 256, "num_hidden_layers": 4, "num_attention_heads": 8},
        {},
        False,
    ),
    "untied": ({"tie_word_embeddings": False}, {}, False),
    "minimind-3": (MINIMIND_3, {}, False),
}


def minimind_modules(minimind_src):
    sys.path.insert(0, str(minimind_src))
    from model import model_lora, model_minimind

    return model_minimind, model_lora


def own_model(model_minimind, seed: int, shape: dict, **switches):
    torch.manual_seed(seed)
    config = model_minimind.MiniMindConfig(**(shape | switches))
    return model_minimind.MiniMindForCausalLM(config)


def models_of_kind(kind: str, minimind_src, folder):
    """(MiniMind's own model, as eval_llm.py loads it; mminfer's builtin; mminfer's minimind)."""
    return minimind_models(minimind_src, folder, *KINDS[kind])


def minimind_models(minimind_src, folder, switches, overrides, with_lora, shape=SHAPE, spread=True):
    """models_of_kind for MiniMind's ``switches`` on ``shape``, the embedding spread or not."""
    model_minimind, model_lora = minimind_modules(minimind_src)
    trained = own_model(model_minimind, 0, shape, **switches)
    if spread:
        with torch.no_grad():
            trained.model.embed_tokens.weight.normal_(0.0, 0.2)
    path = folder / "model.pth"
    torch.save({k: v.half() for k, v in trained.state_dict().items()}, path)
    lora = None
    if with_lora:
        model_lora.apply_lora(trained, rank=8)
        for module in trained.modules():
            if hasattr(module, "lora"):
                module.lora.B.weight.data.normal_(0.0, 0.3)
        lora = folder / "lora.pth"
        model_lora.save_lora(trained, lora)
    reference = own_model(model_minimind, 1, shape, **switches)
    reference.load_state_dict(torch.load(path, weights_only=True), strict=True)
    if with_lora:
        model_lora.apply_lora(reference, rank=8)
        state = torch.load(lora, weights_only=True)
        for name, module in reference.named_modules():
            if hasattr(module, "lora"):
                prefix = f"{name}.lora."
                module.lora.load_state_dict(
                    {k.removeprefix(prefix): v for k, v in state.items() if k.startswith(prefix)}
                )
    reference.eval()
    if "max_position_embeddings" in shape:
        overrides = {"max_position_embeddings": shape["max_position_embeddings"], **overrides}
    backends = []
    for backend in ("builtin", "minimind"):
        spec = ModelSpec(backend=backend, minimind_src=minimind_src, overrides=overrides)
        backends.append(load_model(path, spec, lora=lora).model)
    return reference, backends
