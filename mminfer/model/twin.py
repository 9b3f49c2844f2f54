"""A torch-only twin of MiniMind's ``MiniMindForCausalLM``: the ``builtin`` backend.

Used when MiniMind's own source (which needs ``transformers``) does not import. It has the same
state_dict keys, ``forward`` and ``generate`` (signatures, defaults, loop, RNG use) and the same
arithmetic in the same order, down to the attention kernel (fused SDPA for a multi-token step
without a cache, explicit softmax otherwise), for every model MiniMind makes: dense or MoE
(``use_moe``), tied or untied head, with YaRN (``inference_rope_scaling``) and with a LoRA
(``model/model_lora.py``, unmerged). Logits agree with MiniMind's bit for bit.

Read top to bottom: config, norm, rotary embedding, attention, MLP, mixture of experts, block,
model, the language model and its generate, then the sampling filters.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import nn

# MiniMind's YaRN, as MiniMindConfig(inference_rope_scaling=True) sets it (eval_llm.py's switch).
MINIMIND_YARN = {
    "beta_fast": 32,
    "beta_slow": 1,
    "factor": 16,
    "original_max_position_embeddings": 2048,
    "attention_factor": 1.0,
    "type": "yarn",
}


@dataclass
class MiniMindConfig:
    """Hyperparameters, with MiniMind's defaults (``model/model_minimind.py``)."""

    hidden_size: int = 768
    num_hidden_layers: int = 8
    vocab_size: int = 6400
    num_attention_heads: int = 8
    num_key_value_heads: int = 4
    head_dim: int | None = None  # None: hidden_size // num_attention_heads
    intermediate_size: int | None = None  # None: ceil(hidden_size * pi / 64) * 64
    max_position_embeddings: int = 32768
    rms_norm_eps: float = 1e-6
    rope_theta: float = 1e6
    dropout: float = 0.0
    flash_attn: bool = True
    bos_token_id: int = 1
    eos_token_id: int = 2
    tie_word_embeddings: bool = True
    inference_rope_scaling: bool = False
    rope_scaling: dict | None = None  # None: MINIMIND_YARN with inference_rope_scaling, else none
    use_moe: bool = False
    num_experts: int = 4
    num_experts_per_tok: int = 1
    moe_intermediate_size: int | None = None  # None: intermediate_size
    norm_topk_prob: bool = True

    def __post_init__(self):
        if self.head_dim is None:
            self.head_dim = self.hidden_size // self.num_attention_heads
        if self.intermediate_size is None:
            self.intermediate_size = math.ceil(self.hidden_size * math.pi / 64) * 64
        if self.moe_intermediate_size is None:
            self.moe_intermediate_size = self.intermediate_size
        if self.rope_scaling is None and self.inference_rope_scaling:
            self.rope_scaling = dict(MINIMIND_YARN)

    def to_dict(self) -> dict:
        return asdict(self)


class RMSNorm(nn.Module):
    """x / rms(x) * weight, computed in float32 and cast back (as MiniMind does)."""

    def __init__(self, dim: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x32 = x.float()
        normed = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)
        return (self.weight * normed).type_as(x)


def yarn_scaled(
    inv_freq: torch.Tensor, head_dim: int, positions: int, theta: float, scaling: dict
) -> tuple[torch.Tensor, float]:
    """YaRN as MiniMind applies it: (the scaled inverse frequencies, the attention factor).

    With a table longer than the original context, each frequency f(i) becomes
    f(i) * ((1 - ramp(i)) + ramp(i) / factor), where ramp climbs linearly from 0 to 1 between the
    dimensions whose wavelengths fit beta_fast and beta_slow turns into the original context.
    """
    original = scaling.get("original_max_position_embeddings", 2048)
    factor = scaling.get("factor", 16)
    beta_fast = scaling.get("beta_fast", 32.0)
    beta_slow = scaling.get("beta_slow", 1.0)
    attention_factor = scaling.get("attention_factor", 1.0)
    if positions / original <= 1.0:
        return inv_freq, attention_factor

    def dimension_of(beta: float) -> float:
        """The dimension whose wavelength turns ``beta`` times in the original context."""
        return (head_dim * math.log(original / (beta * 2 * math.pi))) / (2 * math.log(theta))

    low = max(math.floor(dimension_of(beta_fast)), 0)
    high = min(math.ceil(dimension_of(beta_slow)), head_dim // 2 - 1)
    dims = torch.arange(head_dim // 2, device=inv_freq.device).float()
    ramp = torch.clamp((dims - low) / max(high - low, 0.001), 0, 1)
    return inv_freq * (1 - ramp + ramp / factor), attention_factor


def rotary_tables(
    head_dim: int, max_positions: int, theta: float, rope_scaling: dict | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin tables, each (max_positions, head_dim): the half-dim angles written twice."""
    exponents = torch.arange(0, head_dim, 2)[: head_dim // 2].float() / head_dim
    inv_freq = 1.0 / (theta**exponents)  # (head_dim/2,)
    attention_factor = 1.0
    if rope_scaling is not None:
        inv_freq, attention_factor = yarn_scaled(
            inv_freq, head_dim, max_positions, theta, rope_scaling
        )
    positions = torch.arange(max_positions)  # integer positions, promoted by outer()
    angles = torch.outer(positions, inv_freq).float()  # (max_positions, head_dim/2)
    cos = torch.cat([torch.cos(angles), torch.cos(angles)], dim=-1) * attention_factor
    sin = torch.cat([torch.sin(angles), torch.sin(angles)], dim=-1) * attention_factor
    return cos, sin


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def apply_rotary(q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor):
    """Rotate q (b, t, heads, d) and k (b, t, kv_heads, d) by the angles of their positions."""
    cos = cos.unsqueeze(1)  # (t, 1, d): broadcast over heads
    sin = sin.unsqueeze(1)
    q_rotated = ((q * cos) + (rotate_half(q) * sin)).to(q.dtype)
    k_rotated = ((k * cos) + (rotate_half(k) * sin)).to(k.dtype)
    return q_rotated, k_rotated


def repeat_kv(x: torch.Tensor, n_rep: int) -> torch.Tensor:
    """(b, t, kv_heads, d) -> (b, t, kv_heads * n_rep, d): each KV head serves n_rep query heads."""
    if n_rep == 1:
        return x
    batch, length, kv_heads, head_dim = x.shape
    expanded = x[:, :, :, None, :].expand(batch, length, kv_heads, n_rep, head_dim)
    return expanded.reshape(batch, length, kv_heads * n_rep, head_dim)


class LoRA(nn.Module):
    """MiniMind's low-rank update of one square linear layer: B(A(x)), A (rank, n), B (n, rank)."""

    def __init__(self, features: int, rank: int):
        super().__init__()
        self.A = nn.Linear(features, rank, bias=False)
        self.B = nn.Linear(rank, features, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.B(self.A(x))


class Linear(nn.Linear):
    """A linear layer without bias that can carry a LoRA, unmerged: x W^T + B(A(x)).

    Its state_dict is nn.Linear's (``weight``), plus ``lora.A.weight`` and ``lora.B.weight`` once
    :func:`apply_lora` gives it one, exactly as MiniMind's ``apply_lora`` does to nn.Linear.
    """

    def __init__(self, in_features: int, out_features: int):
        super().__init__(in_features, out_features, bias=False)
        self.register_module("lora", None)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = super().forward(x)
        if self.lora is not None:
            out = out + self.lora(x)
        return out


class Attention(nn.Module):
    """Grouped-query attention with q/k RMSNorm, rotary positions and a (K, V) cache."""

    def __init__(self, config: MiniMindConfig):
        super().__init__()
        self.n_heads = config.num_attention_heads
        self.n_kv_heads = config.num_key_value_heads
        self.n_rep = self.n_heads // self.n_kv_heads
        self.head_dim = config.head_dim
        hidden = config.hidden_size
        self.q_proj = Linear(hidden, self.n_heads * self.head_dim)
        self.k_proj = Linear(hidden, self.n_kv_heads * self.head_dim)
        self.v_proj = Linear(hidden, self.n_kv_heads * self.head_dim)
        self.o_proj = Linear(self.n_heads * self.head_dim, hidden)
        self.q_norm = RMSNorm(self.head_dim, eps=config.rms_norm_eps)
        self.k_norm = RMSNorm(self.head_dim, eps=config.rms_norm_eps)
        self.attn_dropout = nn.Dropout(config.dropout)
        self.resid_dropout = nn.Dropout(config.dropout)
        self.dropout = config.dropout
        self.flash = hasattr(F, "scaled_dot_product_attention") and config.flash_attn

    def forward(self, x, position_embeddings, past_key_value=None, use_cache=False, mask=None):
        batch, seq_len, _ = x.shape
        q = self.q_proj(x).view(batch, seq_len, self.n_heads, self.head_dim)
        k = self.k_proj(x).view(batch, seq_len, self.n_kv_heads, self.head_dim)
        v = self.v_proj(x).view(batch, seq_len, self.n_kv_heads, self.head_dim)
        q = self.q_norm(q)
        k = self.k_norm(k)
        cos, sin = position_embeddings
        q, k = apply_rotary(q, k, cos, sin)

        if past_key_value is not None:  # append this step's keys/values to the cached ones
            k = torch.cat([past_key_value[0], k], dim=1)  # (b, past + t, kv_heads, d)
            v = torch.cat([past_key_value[1], v], dim=1)
        present = (k, v) if use_cache else None  # cached before repeat_kv: GQA keeps it small

        q = q.transpose(1, 2)  # (b, heads, t, d)
        k = repeat_kv(k, self.n_rep).transpose(1, 2)  # (b, heads, past + t, d)
        v = repeat_kv(v, self.n_rep).transpose(1, 2)

        fused = self.flash and seq_len > 1 and past_key_value is None  # MiniMind's order:
        if fused and (mask is None or bool(torch.all(mask == 1))):  # the mask is read last
            p = self.dropout if self.training else 0.0
            out = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)
        else:
            scores = (q @ k.transpose(-2, -1)) / math.sqrt(self.head_dim)  # (b, heads, t, past + t)
            causal = torch.full((seq_len, seq_len), float("-inf"), device=scores.device).triu(1)
            scores[:, :, :, -seq_len:] += causal
            if mask is not None:
                scores += (1.0 - mask.unsqueeze(1).unsqueeze(2)) * -1e9
            weights = F.softmax(scores.float(), dim=-1).type_as(q)
            out = self.attn_dropout(weights) @ v  # (b, heads, t, d)

        out = out.transpose(1, 2).reshape(batch, seq_len, -1)  # (b, t, heads * d)
        return self.resid_dropout(self.o_proj(out)), present


class FeedForward(nn.Module):
    """SwiGLU: down(silu(gate(x)) * up(x))."""

    def __init__(self, config: MiniMindConfig, intermediate_size: int | None = None):
        super().__init__()
        inner = intermediate_size or config.intermediate_size
        self.gate_proj = Linear(config.hidden_size, inner)
        self.down_proj = Linear(inner, config.hidden_size)
        self.up_proj = Linear(config.hidden_size, inner)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class MoEFeedForward(nn.Module):
    """A mixture of experts in place of the MLP, as MiniMind's MOEFeedForward in eval mode.

    A router (``gate``) scores the experts per token with a softmax; each token goes to its
    ``num_experts_per_tok`` best (``topk``, unsorted), weighted by their scores (normalised to sum
    to 1 when ``norm_topk_prob``). The experts are visited in order, each running on its tokens
    only, and their weighted outputs are added into place with ``index_add_``.
    """

    def __init__(self, config: MiniMindConfig):
        super().__init__()
        self.experts_per_token = config.num_experts_per_tok
        self.norm_topk_prob = config.norm_topk_prob
        self.gate = Linear(config.hidden_size, config.num_experts)
        inner = config.moe_intermediate_size
        experts = [FeedForward(config, intermediate_size=inner) for _ in range(config.num_experts)]
        self.experts = nn.ModuleList(experts)

    def route(self, x_flat: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(weights, expert ids) of each token, each (tokens, experts_per_token)."""
        scores = F.softmax(self.gate(x_flat), dim=-1)  # (tokens, experts)
        weights, chosen = torch.topk(scores, k=self.experts_per_token, dim=-1, sorted=False)
        if self.norm_topk_prob:
            weights = weights / (weights.sum(dim=-1, keepdim=True) + 1e-20)
        return weights, chosen

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, seq_len, hidden = x.shape
        x_flat = x.view(-1, hidden)  # (tokens, hidden)
        weights, chosen = self.route(x_flat)
        y = torch.zeros_like(x_flat)
        for index, expert in enumerate(self.experts):
            picked = chosen == index  # (tokens, experts_per_token)
            if not picked.any():
                continue
            tokens = picked.any(dim=-1).nonzero().flatten()
            weight = weights[picked].view(-1, 1)  # one per token: topk picks an expert once
            y.index_add_(0, tokens, (expert(x_flat[tokens]) * weight).to(y.dtype))
        return y.view(batch, seq_len, hidden)


class Block(nn.Module):
    """Pre-norm transformer block: x + attn(norm(x)), then h + mlp(norm(h))."""

    def __init__(self, config: MiniMindConfig):
        super().__init__()
        self.self_attn = Attention(config)
        self.input_layernorm = RMSNorm(config.hidden_size, eps=config.rms_norm_eps)
        self.post_attention_layernorm = RMSNorm(config.hidden_size, eps=config.rms_norm_eps)
        if config.use_moe:
            self.mlp = MoEFeedForward(config)
        else:
            self.mlp = FeedForward(config)

    def forward(self, hidden, position_embeddings, past_key_value=None, use_cache=False, mask=None):
        normed = self.input_layernorm(hidden)
        attn_out, present = self.self_attn(
            normed, position_embeddings, past_key_value, use_cache, mask
        )
        hidden = attn_out + hidden
        hidden = hidden + self.mlp(self.post_attention_layernorm(hidden))
        return hidden, present


class MiniMindModel(nn.Module):
    """Embedding, the blocks, the final norm. Returns hidden states and the per-layer cache."""

    def __init__(self, config: MiniMindConfig):
        super().__init__()
        self.config = config
        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size)
        self.dropout = nn.Dropout(config.dropout)
        self.layers = nn.ModuleList([Block(config) for _ in range(config.num_hidden_layers)])
        self.norm = RMSNorm(config.hidden_size, eps=config.rms_norm_eps)
        cos, sin = rotary_tables(
            config.head_dim, config.max_position_embeddings, config.rope_theta, config.rope_scaling
        )
        self.register_buffer("freqs_cos", cos, persistent=False)  # not in the state_dict
        self.register_buffer("freqs_sin", sin, persistent=False)

    def forward(self, input_ids, attention_mask=None, past_key_values=None, use_cache=False):
        _, seq_len = input_ids.shape
        past_key_values = past_key_values or [None] * len(self.layers)
        if past_key_values[0] is None:
            start = 0
        else:
            start = past_key_values[0][0].shape[1]
        if start + seq_len > self.config.max_position_embeddings:
            raise ValueError(
                f"sequence of {start + seq_len} tokens exceeds max_position_embeddings "
                f"{self.config.max_position_embeddings}"
            )
        hidden = self.dropout(self.embed_tokens(input_ids))  # (b, t, hidden)
        positions = (
            self.freqs_cos[start : start + seq_len],
            self.freqs_sin[start : start + seq_len],
        )
        presents = []
        for layer, past in zip(self.layers, past_key_values):
            hidden, present = layer(hidden, positions, past, use_cache, attention_mask)
            presents.append(present)
        return self.norm(hidden), presents


@dataclass
class CausalLMOutput:
    """What ``forward`` returns, named as in transformers' output classes."""

    logits: torch.Tensor  # (b, t_kept, vocab)
    past_key_values: list  # per layer (K, V), each (b, length, kv_heads, head_dim), or None
    hidden_states: torch.Tensor | None = None
    loss: torch.Tensor | None = None
    aux_loss: torch.Tensor | None = None


class MiniMindForCausalLM(nn.Module):
    """The language model: MiniMindModel plus the output projection, and MiniMind's generate."""

    def __init__(self, config: MiniMindConfig | None = None):
        super().__init__()
        self.config = config or MiniMindConfig()
        self.model = MiniMindModel(self.config)
        self.lm_head = Linear(self.config.hidden_size, self.config.vocab_size)
        if self.config.tie_word_embeddings:
            self.model.embed_tokens.weight = self.lm_head.weight

    def forward(
        self,
        input_ids,
        attention_mask=None,
        past_key_values=None,
        use_cache=False,
        logits_to_keep=0,
        labels=None,
        **kwargs,
    ):
        hidden, presents = self.model(input_ids, attention_mask, past_key_values, use_cache)
        if isinstance(logits_to_keep, int):
            kept = slice(-logits_to_keep, None)  # logits_to_keep=0 keeps every position
        else:
            kept = logits_to_keep
        logits = self.lm_head(hidden[:, kept, :])
        loss = None
        if labels is not None:  # next-token loss: position i predicts token i + 1
            predictions = logits[..., :-1, :].contiguous()
            targets = labels[..., 1:].contiguous()
            flat = predictions.view(-1, predictions.size(-1))
            loss = F.cross_entropy(flat, targets.view(-1), ignore_index=-100)
        aux_loss = hidden.new_zeros(1).squeeze()
        return CausalLMOutput(
            logits=logits,
            past_key_values=presents,
            hidden_states=hidden,
            loss=loss,
            aux_loss=aux_loss,
        )

    @torch.inference_mode()
    def generate(
        self,
        inputs=None,
        attention_mask=None,
        max_new_tokens=8192,
        temperature=0.85,
        top_p=0.85,
        top_k=50,
        eos_token_id=2,
        streamer=None,
        use_cache=True,
        num_return_sequences=1,
        do_sample=True,
        repetition_penalty=1.0,
        **kwargs,
    ):
        """MiniMind's decoding loop.

        Returns the prompt followed by the new tokens, (n, prompt + new), finished rows padded with
        eos. Each step: logits / temperature, then repetition penalty, top-k, top-p, and multinomial
        sampling or argmax.
        """
        input_ids = kwargs.pop("input_ids", inputs).repeat(num_return_sequences, 1)
        if attention_mask is not None:
            attention_mask = attention_mask.repeat(num_return_sequences, 1)
        past_key_values = kwargs.pop("past_key_values", None)
        return_kv = kwargs.pop("return_kv", False)
        rows = input_ids.shape[0]
        finished = torch.zeros(rows, dtype=torch.bool, device=input_ids.device)
        if streamer:
            streamer.put(input_ids.cpu())

        for _ in range(max_new_tokens):
            past_len = past_key_values[0][0].shape[1] if past_key_values else 0
            outputs = self.forward(
                input_ids[:, past_len:],
                attention_mask,
                past_key_values,
                use_cache=use_cache,
                **kwargs,
            )
            if attention_mask is not None:
                new_column = attention_mask.new_ones(attention_mask.shape[0], 1)
                attention_mask = torch.cat([attention_mask, new_column], -1)
            logits = outputs.logits[:, -1, :] / temperature  # (n, vocab)
            if repetition_penalty != 1.0:
                apply_repetition_penalty(logits, input_ids, repetition_penalty)
            if top_k > 0:
                logits = keep_top_k(logits, top_k)
            if top_p < 1.0:
                logits = keep_top_p(logits, top_p)
            if do_sample:
                probs = torch.softmax(logits, dim=-1)
                next_token = torch.multinomial(probs, num_samples=1)  # (n, 1)
            else:
                next_token = torch.argmax(logits, dim=-1, keepdim=True)
            if eos_token_id is not None:  # a finished row keeps emitting eos
                eos_column = next_token.new_full((next_token.shape[0], 1), eos_token_id)
                next_token = torch.where(finished.unsqueeze(-1), eos_column, next_token)
            input_ids = torch.cat([input_ids, next_token], dim=-1)
            past_key_values = outputs.past_key_values if use_cache else None
            if streamer:
                streamer.put(next_token.cpu())
            if eos_token_id is not None:
                finished |= next_token.squeeze(-1).eq(eos_token_id)
                if finished.all():
                    break

        if streamer:
            streamer.end()
        if return_kv:
            return {"generated_ids": input_ids, "past_kv": past_key_values}
        return input_ids


@contextmanager
def wrapped_forward(model, wrap: Callable):
    """Inside the ``with`` block, ``model.forward`` is ``wrap(the original forward)``; then the
    original is back. generate calls ``self.forward``, and an instance attribute shadows the
    class's method, so the wrapper sees every call of the loop, in both backends."""
    original = model.forward
    had_own_forward = "forward" in vars(model)
    model.forward = wrap(original)
    try:
        yield
    finally:
        if had_own_forward:
            model.forward = original
        else:
            del model.forward  # the class's forward is visible again


def square_linears(model: nn.Module) -> dict[str, nn.Linear]:
    """The layers MiniMind's apply_lora gives a LoRA: every nn.Linear with in == out features."""
    square = {}
    for name, module in model.named_modules():
        if isinstance(module, nn.Linear) and module.in_features == module.out_features:
            square[name] = module
    return square


def apply_lora(model: nn.Module, rank: int) -> list[str]:
    """Give every square linear layer a LoRA of ``rank``, as MiniMind's ``apply_lora`` does.

    Returns the names of those layers, in module order.
    """
    square = square_linears(model)
    for module in square.values():  # attached after the walk, which must not see them
        module.lora = LoRA(module.in_features, rank)
    return list(square)


# --- the sampling filters of MiniMind's generate -------------------------------------------------


def apply_repetition_penalty(logits: torch.Tensor, input_ids: torch.Tensor, penalty: float):
    """In place: seen tokens' positive logits divided by the penalty, negative ones multiplied."""
    for row in range(input_ids.shape[0]):
        seen = torch.unique(input_ids[row])
        score = logits[row, seen]
        logits[row, seen] = torch.where(score > 0, score / penalty, score * penalty)


def keep_top_k(logits: torch.Tensor, k: int) -> torch.Tensor:
    """Set every logit below the k-th largest of its row to -inf (ties with the k-th survive)."""
    kth_largest = torch.topk(logits, k)[0][..., -1, None]  # (n, 1)
    logits[logits < kth_largest] = -float("inf")
    return logits


def top_p_mask(logits: torch.Tensor, p: float) -> torch.Tensor:
    """MiniMind's nucleus rule: True where a token is removed.

    Sorted descending, a token is removed where the cumulative probability before it is already
    past p: the mask of "cumulative > p" shifted right by one, so the token that crosses p stays,
    and the most likely token always stays.
    """
    sorted_logits, sorted_indices = torch.sort(logits, descending=True)
    cumulative = torch.cumsum(torch.softmax(sorted_logits, dim=-1), dim=-1)
    removed_sorted = cumulative > p
    removed_sorted[..., 1:] = removed_sorted[..., :-1].clone()  # shift right by one
    removed_sorted[..., 0] = False  # the most likely token always survives
    return removed_sorted.scatter(1, sorted_indices, removed_sorted)  # back to vocabulary order


def keep_top_p(logits: torch.Tensor, p: float) -> torch.Tensor:
    """Set the logits MiniMind's top-p rule removes to -inf."""
    logits[top_p_mask(logits, p)] = -float("inf")
    return logits
