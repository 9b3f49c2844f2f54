"""The narrow model: the same model at minimal width, a lower bound of the fixed cost per call.

:func:`minimal_width` builds the same class with the same layers, heads and KV heads, at head_dim
2 (RoPE rotates halves), an intermediate of 2 and a vocabulary of 2, without LoRA. Its generate
makes the same calls of forward, dispatches the same ops and runs the same Python between them as
the real model's, on tensors too small to cost more than their dispatch: its time is a lower bound
of the part of the real model's time that does not grow with the width (its tiny ops also skip the
thread start-up the real width pays). Used by the time job (mminfer.measures.time.measure), which
times its cached generate in the same rounds as the real model's.
"""

from __future__ import annotations

import copy

from torch import nn


def minimal_width(model: nn.Module) -> nn.Module:
    """The same class with the same layers, heads and KV heads, at head_dim 2 (RoPE rotates
    halves), an intermediate of 2 and a vocabulary of 2; without LoRA. On ``model``'s device and
    dtype, in eval mode, its weights at the class's initialisation."""
    config = copy.deepcopy(model.config)
    config.hidden_size = 2 * config.num_attention_heads
    if getattr(config, "head_dim", None):
        config.head_dim = 2
    config.intermediate_size = 2
    if getattr(config, "moe_intermediate_size", None):
        config.moe_intermediate_size = 2
    config.vocab_size = 2
    parameter = next(model.parameters())
    return type(model)(config).to(device=parameter.device, dtype=parameter.dtype).eval()


def narrow_shape(narrow: nn.Module) -> dict[str, int]:
    """The narrow model's widths and counts, from its config (time.json's ``narrow_shape``)."""
    config = narrow.config
    return {
        "hidden_size": config.hidden_size,
        "intermediate_size": config.intermediate_size,
        "vocab_size": config.vocab_size,
        "num_hidden_layers": config.num_hidden_layers,
        "num_attention_heads": config.num_attention_heads,
        "num_key_value_heads": config.num_key_value_heads,
    }
