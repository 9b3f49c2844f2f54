"""What the tests build models and generations from: a small MiniMind config from a few numbers,
generate's settings with every filter off and no eos (greedy: argmax), short serve settings."""

from __future__ import annotations

import torch

from mminfer.measures.serve.measure import ServeSettings
from mminfer.model.twin import MiniMindConfig

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


def never_past(model, id_count: int, lead: float = 3.0, gain: float = 20.0) -> None:
    """Weights under which a model whose embedding has more rows than ``id_count`` never picks a
    row at or past it, greedy or sampled, as a model trained with a tokenizer of ``id_count`` ids
    never picks one it never saw.

    Hidden dimension 0 carries ``lead`` for every real token and -``lead`` for every row past the
    end (whose other dimensions are 0); no layer writes into it (its row of every o_proj and
    down_proj is 0), and the final norm scales it by ``gain``. So the last hidden state's dimension
    0 is positive whatever the input, every real row's logit carries +lead x h0 and every row past
    the end scores -lead x h0 alone: hundreds of logits below the best real token.
    """
    state = model.state_dict()
    with torch.no_grad():
        embedding = state["model.embed_tokens.weight"]  # (rows, hidden)
        embedding[id_count:] = 0.0
        embedding[:id_count, 0] = lead
        embedding[id_count:, 0] = -lead
        for name, weight in state.items():
            if name.endswith(("o_proj.weight", "down_proj.weight")):
                weight[0, :] = 0.0  # (hidden out, in): nothing writes into dimension 0
        state["model.norm.weight"][0] = gain
        if "lm_head.weight" in state and state["lm_head.weight"] is not embedding:
            state["lm_head.weight"].copy_(embedding)
