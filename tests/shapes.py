"""What the tests build models and generations from: a small MiniMind config from a few numbers,
generate's settings with every filter off and no eos (greedy: argmax), short serve settings."""

from __future__ import annotations

from mminfer.model import MiniMindConfig
from mminfer.serve import ServeSettings

UNFILTERED = {"top_k": 0, "top_p": 1.0, "eos_token_id": None}  # every token a candidate, no eos
GREEDY = UNFILTERED | {"do_sample": False}


def small_config(
    hidden: int = 64,
    layers: int = 2,
    heads: int = 4,
    kv_heads: int = 2,
    vocab: int = 600,
    positions: int | None = None,
    **settings,
) -> MiniMindConfig:
    """A MiniMind config ``hidden`` wide and ``layers`` deep; ``settings``: any other field.

    ``positions``: max_position_embeddings (None: MiniMind's default).
    """
    shape = {
        "hidden_size": hidden,
        "num_hidden_layers": layers,
        "num_attention_heads": heads,
        "num_key_value_heads": kv_heads,
        "vocab_size": vocab,
    }
    if positions is not None:
        shape["max_position_embeddings"] = positions
    return MiniMindConfig(**shape, **settings)


def prompt_of(length: int) -> list[int]:
    """A test prompt of ``length`` ids: bos (1), then ids that repeat no pattern a model learns."""
    return [1] + [(17 * i) % 500 + 3 for i in range(length - 1)]


def serve_settings(
    batches: list[int], warmup: int, prefill_up_to: int, memory_cap_gib: float = 1.0
) -> ServeSettings:
    """Serve settings for a small model: 3 decode steps a batch in each of 2 passes, 25 tokens/s,
    a context of 64."""
    return ServeSettings(
        batches=batches,
        decode_steps=3,
        passes=2,
        warmup=warmup,
        prefill_up_to=prefill_up_to,
        memory_cap_gib=memory_cap_gib,
        tokens_per_second=25.0,
        context=64,
        growth_per_doubling=0.1,
    )
