"""A torch-only twin of MiniMind's dense ``MiniMindForCausalLM`` (no MoE, no YaRN): the ``builtin`` backend,
used when MiniMind's source (which needs ``transformers``) does not import. Same state_dict keys, ``forward``
and ``generate`` (signatures, defaults, loop, RNG use), same arithmetic in the same order down to the attention
kernel (fused SDPA for a multi-token step without a cache, explicit softmax otherwise): logits agree bit for bit.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import nn


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

    def __post_init__(self):
        if self.head_dim is None:
            self.head_dim = self.hidden_size // self.num_attention_heads
        if self.intermediate_size is None:
            self.intermediate_size = math.ceil(self.hidden_size * math.pi / 64) * 64

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


def rotary_tables(
    head_dim: int, max_positions: int, theta: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin tables, each (max_positions, head_dim): the half-dim angles written twice."""
    exponents = torch.arange(0, head_dim, 2)[: head_dim // 2].float() / head_dim
    inv_freq = 1.0 / (theta**exponents)  # (head_dim/2,)
    positions = torch.arange(max_positions)  # integer positions, promoted by outer()
    angles = torch.outer(positions, inv_freq).float()  # (max_positions, head_dim/2)
    cos = torch.cat([torch.cos(angles), torch.cos(angles)], dim=-1) * 1.0
    sin = torch.cat([torch.sin(angles), torch.sin(angles)], dim=-1) * 1.0
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


class Attention(nn.Module):
    """Grouped-query attention with q/k RMSNorm, rotary positions and a (K, V) cache."""

    def __init__(self, config: MiniMindConfig):
        super().__init__()
        self.n_heads = config.num_attention_heads
        self.n_kv_heads = config.num_key_value_heads
        self.n_rep = self.n_heads // self.n_kv_heads
        self.head_dim = config.head_dim
        self.q_proj = nn.Linear(config.hidden_size, self.n_heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(config.hidden_size, self.n_kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(config.hidden_size, self.n_kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(self.n_heads * self.head_dim, config.hidden_size, bias=False)
        self.q_norm = RMSNorm(self.head_dim, eps=config.rms_norm_eps)
        self.k_norm = RMSNorm(self.head_dim, eps=config.rms_norm_eps)
        self.attn_dropout = nn.Dropout(config.dropout)
        self.resid_dropout = nn.Dropout(config.dropout)
        self.dropout = config.dropout
        self.flash = hasattr(F, "scaled_dot_product_attention") and config.flash_attn

    def forward(
        self, x, position_embeddings, past_key_value=None, use_cache=False, attention_mask=None
    ):
        batch, seq_len, _ = x.shape
        q = self.q_proj(x).view(batch, seq_len, self.n_heads, self.head_dim)
        k = self.k_proj(x).view(batch, seq_len, self.n_kv_heads, self.head_dim)
        v = self.v_proj(x).view(batch, seq_len, self.n_kv_heads, self.head_dim)
        q, k = self.q_norm(q), self.k_norm(k)
        cos, sin = position_embeddings
        q, k = apply_rotary(q, k, cos, sin)

        if past_key_value is not None:  # append this step's keys/values to the cached ones
            k = torch.cat([past_key_value[0], k], dim=1)  # (b, past + t, kv_heads, d)
            v = torch.cat([past_key_value[1], v], dim=1)
        present = (k, v) if use_cache else None  # cached before repeat_kv: GQA keeps it small

        q = q.transpose(1, 2)  # (b, heads, t, d)
        k = repeat_kv(k, self.n_rep).transpose(1, 2)  # (b, heads, past + t, d)
        v = repeat_kv(v, self.n_rep).transpose(1, 2)

        mask_is_trivial = attention_mask is None or bool(torch.all(attention_mask == 1))
        if self.flash and seq_len > 1 and past_key_value is None and mask_is_trivial:
            p = self.dropout if self.training else 0.0
            out = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)
        else:
            scores = (q @ k.transpose(-2, -1)) / math.sqrt(self.head_dim)  # (b, heads, t, past + t)
            causal = torch.full((seq_len, seq_len), float("-inf"), device=scores.device).triu(1)
            scores[:, :, :, -seq_len:] += causal
            if attention_mask is not None:
                scores += (1.0 - attention_mask.unsqueeze(1).unsqueeze(2)) * -1e9
            weights = F.softmax(scores.float(), dim=-1).type_as(q)
            out = self.attn_dropout(weights) @ v  # (b, heads, t, d)

        out = out.transpose(1, 2).reshape(batch, seq_len, -1)  # (b, t, heads * d)
        return self.resid_dropout(self.o_proj(out)), present


class FeedForward(nn.Module):
    """SwiGLU: down(silu(gate(x)) * up(x))."""

    def __init__(self, config: MiniMindConfig):
        super().__init__()
        self.gate_proj = nn.Linear(config.hidden_size, config.intermediate_size, bias=False)
        self.down_proj = nn.Linear(config.intermediate_size, config.hidden_size, bias=False)
        self.up_proj = nn.Linear(config.hidden_size, config.intermediate_size, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Block(nn.Module):
    """Pre-norm transformer block: x + attn(norm(x)), then h + mlp(norm(h))."""

    def __init__(self, config: MiniMindConfig):
        super().__init__()
        self.self_attn = Attention(config)
        self.input_layernorm = RMSNorm(config.hidden_size, eps=config.rms_norm_eps)
        self.post_attention_layernorm = RMSNorm(config.hidden_size, eps=config.rms_norm_eps)
        self.mlp = FeedForward(config)

    def forward(
        self, hidden, position_embeddings, past_key_value=None, use_cache=False, attention_mask=None
    ):
        attn_out, present = self.self_attn(
            self.input_layernorm(hidden),
            position_embeddings,
            past_key_value,
            use_cache,
            attention_mask,
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
        cos, sin = rotary_tables(config.head_dim, config.max_position_embeddings, config.rope_theta)
        self.register_buffer("freqs_cos", cos, persistent=False)  # not in the state_dict
        self.register_buffer("freqs_sin", sin, persistent=False)

    def forward(self, input_ids, attention_mask=None, past_key_values=None, use_cache=False):
        batch, seq_len = input_ids.shape
        past_key_values = past_key_values or [None] * len(self.layers)
        start = past_key_values[0][0].shape[1] if past_key_values[0] is not None else 0
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
    """The language model: MiniMindModel plus a (tied) output projection, and MiniMind's generate."""

    def __init__(self, config: MiniMindConfig | None = None):
        super().__init__()
        self.config = config or MiniMindConfig()
        self.model = MiniMindModel(self.config)
        self.lm_head = nn.Linear(self.config.hidden_size, self.config.vocab_size, bias=False)
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
        kept = slice(-logits_to_keep, None) if isinstance(logits_to_keep, int) else logits_to_keep
        logits = self.lm_head(hidden[:, kept, :])  # logits_to_keep=0 keeps every position
        loss = None
        if labels is not None:  # next-token loss: position i predicts token i + 1
            predictions = logits[..., :-1, :].contiguous()
            targets = labels[..., 1:].contiguous()
            loss = F.cross_entropy(
                predictions.view(-1, predictions.size(-1)), targets.view(-1), ignore_index=-100
            )
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
        """MiniMind's decoding loop: the prompt followed by the new tokens, (n, prompt + new), finished rows
        padded with eos. Logits / temperature, then repetition penalty, top-k, top-p, multinomial or argmax."""
        input_ids = kwargs.pop("input_ids", inputs).repeat(num_return_sequences, 1)
        if attention_mask is not None:
            attention_mask = attention_mask.repeat(num_return_sequences, 1)
        past_key_values = kwargs.pop("past_key_values", None)
        return_kv = kwargs.pop("return_kv", False)
        finished = torch.zeros(input_ids.shape[0], dtype=torch.bool, device=input_ids.device)
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
                attention_mask = torch.cat(
                    [attention_mask, attention_mask.new_ones(attention_mask.shape[0], 1)], -1
                )
            logits = outputs.logits[:, -1, :] / temperature  # (n, vocab)
            if repetition_penalty != 1.0:
                apply_repetition_penalty(logits, input_ids, repetition_penalty)
            if top_k > 0:
                logits = keep_top_k(logits, top_k)
            if top_p < 1.0:
                logits = keep_top_p(logits, top_p)
            if do_sample:
                next_token = torch.multinomial(
                    torch.softmax(logits, dim=-1), num_samples=1
                )  # (n, 1)
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


def apply_repetition_penalty(logits: torch.Tensor, input_ids: torch.Tensor, penalty: float) -> None:
    """In place: seen tokens' positive logits are divided by the penalty, negative ones multiplied."""
    for row in range(input_ids.shape[0]):
        seen = torch.unique(input_ids[row])
        score = logits[row, seen]
        logits[row, seen] = torch.where(score > 0, score / penalty, score * penalty)


def keep_top_k(logits: torch.Tensor, k: int) -> torch.Tensor:
    """Set every logit below the k-th largest of its row to -inf (ties with the k-th all survive)."""
    kth_largest = torch.topk(logits, k)[0][..., -1, None]  # (n, 1)
    logits[logits < kth_largest] = -float("inf")
    return logits


def top_p_mask(logits: torch.Tensor, p: float) -> torch.Tensor:
    """MiniMind's nucleus rule: True where a token is removed (cumulative mass past p, sorted descending)."""
    sorted_logits, sorted_indices = torch.sort(logits, descending=True)
    cumulative = torch.cumsum(torch.softmax(sorted_logits, dim=-1), dim=-1)
    removed_sorted = cumulative > p
    removed_sorted[..., 1:] = removed_sorted[
        ..., :-1
    ].clone()  # shift right: the token crossing p stays
    removed_sorted[..., 0] = False  # the most likely token always survives
    return removed_sorted.scatter(1, sorted_indices, removed_sorted)  # back to vocabulary order


def keep_top_p(logits: torch.Tensor, p: float) -> torch.Tensor:
    logits[top_p_mask(logits, p)] = -float("inf")
    return logits
