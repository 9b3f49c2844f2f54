"""Train the embedded demo's tiny MiniMind on the CPU: pretraining, then SFT.

Both stages follow MiniMind's own trainers in what matters for the measurements:

- pretraining: every document becomes ``[bos] + tokens + [eos]`` and the model learns to predict
  the next token everywhere. As in MiniMind, where each sample is one document, every training
  window starts with a document's ``[bos]`` at position 0; here the following documents fill the
  rest of the window (no padding, so no compute is wasted on pad tokens);
- SFT: every conversation is rendered with the tokenizer's own chat template and the loss is taken
  only on what the assistant says (its answer and the ``<|im_end|>`` that closes it);
- AdamW with MiniMind's cosine schedule ``lr * (0.1 + 0.45 * (1 + cos(pi * step / total)))``,
  after a short linear warmup, gradient clipping at 1.0, float32 on the CPU.

Everything is deterministic for a given :class:`TrainSpec`: the weights are initialised after
``torch.manual_seed(spec.seed)`` and the data order comes from a ``torch.Generator`` seeded with
the same seed. Nothing here knows about Snakemake; a rule script calls :func:`pretrain` and
:func:`sft`.

Read top to bottom: the spec, data (pretrain windows, SFT examples and labels),
schedule, the shared training loop, the two stages.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import torch

from mminfer.errors import MminferError
from mminfer.io import read_jsonl_field
from mminfer.model.loading import ModelSpec, count_parameters, load_model, save_state_dict
from mminfer.model.tokenizer import Tokenizer, load_tokenizer
from mminfer.model.twin import MiniMindConfig, MiniMindForCausalLM
from mminfer.records import rates

IGNORE_INDEX = -100  # label value the loss skips (MiniMind's and torch's convention)
PAD_ID = 0  # <|endoftext|>: pads SFT batches; padded positions carry IGNORE_INDEX labels


# ---------------------------------------------------------------------------
# The spec
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class TrainSpec:
    """Model shape and training schedule of one stage, and the rule's threads.

    Config key demo_model.pretrain or demo_model.sft; the schema holds the demo's values as
    defaults.

    The shape fields build the model in :func:`pretrain`; :func:`sft` takes the shape from the
    pretrained checkpoint (its shape fields stay None) and uses only ``max_position_embeddings``.
    The vocabulary size always comes from the tokenizer.
    """

    max_position_embeddings: int
    seq_len: int  # pretrain: window length; SFT: longest conversation kept (longer ones are cut)
    batch_size: int
    steps: int
    lr: float
    warmup: int
    weight_decay: float
    grad_clip: float
    seed: int
    log_every: int
    threads: int
    hidden_size: int | None = None
    num_attention_heads: int | None = None
    num_key_value_heads: int | None = None
    num_hidden_layers: int | None = None
    intermediate_size: int | None = None  # None: MiniMind's default, ceil(hidden * pi / 64) * 64

    def check(self, section: str = "demo_model") -> None:
        """Raise a clear error for a schedule or shape that cannot train.

        ``section`` is the config key the spec came from (demo_model.pretrain or demo_model.sft),
        named in the message.
        """
        problems = []
        for name in (
            "steps",
            "batch_size",
            "threads",
            "log_every",
            "hidden_size",
            "num_hidden_layers",
        ):
            if getattr(self, name) is not None and getattr(self, name) < 1:
                problems.append(f"{name} must be at least 1 (got {getattr(self, name)})")
        if self.seq_len < 2:
            problems.append(f"seq_len must be at least 2 (got {self.seq_len})")
        if self.seq_len > self.max_position_embeddings:
            problems.append(
                f"seq_len {self.seq_len} exceeds max_position_embeddings "
                f"{self.max_position_embeddings}"
            )
        if self.hidden_size is not None:  # the pretraining spec: a shape to build
            if self.num_attention_heads < 1 or self.hidden_size % self.num_attention_heads:
                problems.append(
                    f"hidden_size {self.hidden_size} is not a multiple of num_attention_heads "
                    f"{self.num_attention_heads}"
                )
            if self.num_key_value_heads < 1 or self.num_attention_heads % self.num_key_value_heads:
                problems.append(
                    f"num_attention_heads {self.num_attention_heads} is not a multiple of "
                    f"num_key_value_heads {self.num_key_value_heads}"
                )
        if self.lr <= 0 or self.warmup < 0:
            problems.append(
                f"lr must be positive and warmup not negative (got {self.lr}, {self.warmup})"
            )
        if problems:
            raise MminferError(f"config key '{section}': " + "; ".join(problems) + ".")

    def model_config(self, vocab_size: int) -> MiniMindConfig:
        """The MiniMindConfig this spec describes, for a tokenizer of ``vocab_size`` tokens."""
        return MiniMindConfig(
            hidden_size=self.hidden_size,
            num_attention_heads=self.num_attention_heads,
            num_key_value_heads=self.num_key_value_heads,
            num_hidden_layers=self.num_hidden_layers,
            intermediate_size=self.intermediate_size,
            max_position_embeddings=self.max_position_embeddings,
            vocab_size=vocab_size,
            dropout=0.0,
        )


def train_spec(params: dict, threads: int, max_positions: int) -> TrainSpec:
    """TrainSpec from a config section and the demo's rotary table length.

    The section is demo_model.pretrain or demo_model.sft, the length
    demo_model.max_position_embeddings; unknown keys are a clear error.
    """
    known = {f.name for f in fields(TrainSpec)}
    unknown = sorted(set(params) - known)
    if unknown:
        raise MminferError(
            f"config key 'demo_model' has unknown training keys: {', '.join(unknown)}."
        )
    return TrainSpec(**params, max_position_embeddings=max_positions, threads=max(1, int(threads)))


# ---------------------------------------------------------------------------
# Pretrain data: documents packed into fixed windows
# ---------------------------------------------------------------------------


def read_jsonl(path: str | Path, field: str) -> list:
    """The ``field`` of every record of a JSONL file, in file order; an empty file is an error."""
    values = read_jsonl_field(path, field, kind="training data")
    if not values:
        raise MminferError(f"training data {path} is empty.")
    return values


def pack_documents(texts: list[str], tokenizer: Tokenizer, seq_len: int) -> torch.Tensor:
    """The documents as ``[bos] doc [eos] [bos] doc [eos] ...`` windows, each from a document.

    A window takes whole documents in order until it is full; the document that overflows it is cut
    there and its rest is dropped, and the next window starts with the next document's ``[bos]``.
    So every ``[bos]`` that opens a window sits at position 0 with nothing before it, as in a prompt
    at inference ("[bos]민수는"). (A plain stream cut every ``seq_len`` tokens puts nearly every
    ``[bos]`` mid-window, after text of other documents; the demo then learned what follows
    "[bos]가람 마을의 특산물은" too weakly on some corpus seeds.)

    Returns a (windows, seq_len) tensor; the last documents, too few to fill a window, are dropped.
    """
    windows: list[list[int]] = []
    window: list[int] = []
    for text in texts:
        window.extend([tokenizer.bos_token_id, *tokenizer.encode(text), tokenizer.eos_token_id])
        if len(window) >= seq_len:
            windows.append(window[:seq_len])
            window = []
    if not windows:
        raise MminferError(
            f"the pretrain data has {len(window)} tokens, fewer than one window of {seq_len} "
            "(config key 'demo_model.pretrain.seq_len'). Lower it, or raise config key "
            "'demo_model.corpus.train_docs'."
        )
    return torch.tensor(windows, dtype=torch.long)


def shuffled_batches(
    count: int, batch_size: int, generator: torch.Generator
) -> Iterator[torch.Tensor]:
    """Endless batches of example indices: each epoch is a fresh permutation, cut into full batches.

    With fewer examples than ``batch_size``, every batch is the whole (permuted) set.
    """
    size = min(batch_size, count)
    while True:
        order = torch.randperm(count, generator=generator)
        for start in range(0, count - size + 1, size):
            yield order[start : start + size]


# ---------------------------------------------------------------------------
# SFT data: chat-rendered conversations with assistant-only labels
# ---------------------------------------------------------------------------


def assistant_marker(tokenizer: Tokenizer) -> list[int]:
    """The tokens that open an assistant turn in the chat template: ``<|im_start|>assistant\\n``."""
    return tokenizer.encode(f"{tokenizer.bos_token}assistant\n")


def assistant_labels(ids: list[int], marker: list[int], eos_id: int) -> list[int]:
    """Labels of one rendered conversation: the token on assistant tokens, else IGNORE_INDEX.

    An assistant span starts right after each ``marker`` and runs through the first ``eos_id`` that
    follows it (the turn's ``<|im_end|>`` is learned, so the model learns to stop). The marker, the
    user turns and whatever the template adds after ``<|im_end|>`` are not learned. A span cut off
    by truncation (no eos) is learned up to the end.
    """
    labels = [IGNORE_INDEX] * len(ids)
    position = 0
    while position < len(ids):
        if ids[position : position + len(marker)] != marker:
            position += 1
            continue
        position += len(marker)
        while position < len(ids):
            labels[position] = ids[position]
            position += 1
            if ids[position - 1] == eos_id:
                break
    return labels


def sft_examples(
    conversations: list[list[dict]], tokenizer: Tokenizer, max_len: int
) -> list[tuple[list[int], list[int]]]:
    """(input ids, labels) per conversation, each cut to ``max_len`` tokens.

    Conversations with no assistant token left after the cut are skipped.
    """
    marker = assistant_marker(tokenizer)
    examples = []
    for messages in conversations:
        text = tokenizer.chat_prompt(messages, add_generation_prompt=False)
        ids = tokenizer.encode(text)[:max_len]
        labels = assistant_labels(ids, marker, tokenizer.eos_token_id)
        if any(label != IGNORE_INDEX for label in labels):
            examples.append((ids, labels))
    if not examples:
        raise MminferError("no SFT conversation has an assistant answer to learn from.")
    return examples


def pad_batch(examples: list[tuple[list[int], list[int]]]) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-pad a batch to its longest example: ids with PAD_ID, labels with IGNORE_INDEX.

    No attention mask is needed: attention is causal, so real tokens never see the padding
    after them.
    """
    length = max(len(ids) for ids, _ in examples)
    input_ids = torch.full((len(examples), length), PAD_ID, dtype=torch.long)
    labels = torch.full((len(examples), length), IGNORE_INDEX, dtype=torch.long)
    for row, (ids, row_labels) in enumerate(examples):
        input_ids[row, : len(ids)] = torch.tensor(ids, dtype=torch.long)
        labels[row, : len(row_labels)] = torch.tensor(row_labels, dtype=torch.long)
    return input_ids, labels


# ---------------------------------------------------------------------------
# Schedule and the training loop both stages share
# ---------------------------------------------------------------------------


def learning_rate(step: int, spec: TrainSpec) -> float:
    """Linear warmup over ``spec.warmup`` steps, times MiniMind's cosine from lr down to lr / 10."""
    cosine = spec.lr * (0.1 + 0.45 * (1.0 + math.cos(math.pi * step / spec.steps)))
    if step < spec.warmup:
        return cosine * (step + 1) / spec.warmup
    return cosine


def make_optimizer(model: torch.nn.Module, spec: TrainSpec) -> torch.optim.AdamW:
    """AdamW; weight decay on the matrices only (not on norm weights)."""
    decayed = [p for p in model.parameters() if p.dim() >= 2]
    plain = [p for p in model.parameters() if p.dim() < 2]
    groups = [
        {"params": decayed, "weight_decay": spec.weight_decay},
        {"params": plain, "weight_decay": 0.0},
    ]
    return torch.optim.AdamW(groups, lr=spec.lr, betas=(0.9, 0.95))


def train_loop(
    stage: str,
    model: torch.nn.Module,
    next_batch: Callable[[], tuple[torch.Tensor, torch.Tensor]],
    spec: TrainSpec,
    log: Callable[[str], None],
) -> dict:
    """Run ``spec.steps`` optimizer steps on the batches ``next_batch`` hands out.

    Logs a progress line every ``spec.log_every`` steps and at the end; returns a summary with the
    first step's loss and the mean loss of the last ``log_every`` steps.
    """
    optimizer = make_optimizer(model, spec)
    model.train()
    start = time.perf_counter()
    tokens = 0  # tokens fed through the model (padding included)
    recent: list[float] = []
    first_loss = None
    for step in range(spec.steps):
        lr = learning_rate(step, spec)
        for group in optimizer.param_groups:
            group["lr"] = lr
        input_ids, labels = next_batch()
        loss = model(input_ids, labels=labels).loss
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), spec.grad_clip)
        optimizer.step()

        value = loss.item()
        if first_loss is None:
            first_loss = value
        recent.append(value)
        if len(recent) > spec.log_every:
            recent.pop(0)
        tokens += input_ids.numel()
        done = step + 1
        if done % spec.log_every == 0 or done == spec.steps:
            elapsed = time.perf_counter() - start
            speed = rates.tokens_per_s(tokens, elapsed)
            log(
                f"{stage} step {done}/{spec.steps} loss {sum(recent) / len(recent):.4f} "
                f"lr {lr:.2e} tokens/s {speed:,.0f} elapsed {elapsed:.1f}s"
            )
    model.eval()
    return {
        "stage": stage,
        "steps": spec.steps,
        "first_loss": first_loss,
        "final_loss": sum(recent) / len(recent),
        "tokens": tokens,
        "seconds": round(time.perf_counter() - start, 3),
        "parameters": count_parameters(model),
    }


# ---------------------------------------------------------------------------
# The two stages
# ---------------------------------------------------------------------------


def pretrain(
    train_jsonl: str | Path,
    tokenizer_dir: str | Path,
    spec: TrainSpec,
    out_pth: str | Path,
    log: Callable[[str], None] = print,
) -> dict:
    """Pretrain a fresh MiniMind on MiniMind-format documents (``{"text": ...}`` per line).

    Saves the state_dict to ``out_pth`` (atomically) and returns a summary of the run.
    """
    spec.check("demo_model.pretrain")
    torch.set_num_threads(spec.threads)
    tokenizer = load_tokenizer(tokenizer_dir)
    windows = pack_documents(read_jsonl(train_jsonl, "text"), tokenizer, spec.seq_len)

    torch.manual_seed(spec.seed)
    model = MiniMindForCausalLM(spec.model_config(tokenizer.vocab_size))
    generator = torch.Generator().manual_seed(spec.seed)
    batches = shuffled_batches(len(windows), spec.batch_size, generator)

    def next_batch() -> tuple[torch.Tensor, torch.Tensor]:
        batch = windows[next(batches)]
        return batch, batch  # the model shifts the labels itself

    log(
        f"pretrain: {count_parameters(model):,} parameters, {len(windows)} windows of "
        f"{spec.seq_len} tokens, {spec.steps} steps of {spec.batch_size}"
    )
    summary = train_loop("pretrain", model, next_batch, spec, log)
    save_state_dict(model, out_pth)
    summary.update(
        windows=len(windows),
        epochs=round(summary["tokens"] / windows.numel(), 2),
        spec=asdict(spec),
    )
    return summary


def sft(
    pretrain_pth: str | Path,
    sft_jsonl: str | Path,
    tokenizer_dir: str | Path,
    spec: TrainSpec,
    out_pth: str | Path,
    log: Callable[[str], None] = print,
) -> dict:
    """Fine-tune the pretrained model on MiniMind-format chats (``{"conversations": [...]}``).

    The loss covers only the assistant's tokens. Saves the state_dict to ``out_pth`` (atomically)
    and returns a summary of the run.
    """
    spec.check("demo_model.sft")
    torch.set_num_threads(spec.threads)
    tokenizer = load_tokenizer(tokenizer_dir)
    examples = sft_examples(read_jsonl(sft_jsonl, "conversations"), tokenizer, spec.seq_len)

    torch.manual_seed(spec.seed)
    loaded = load_model(
        pretrain_pth, ModelSpec(overrides={"max_position_embeddings": spec.max_position_embeddings})
    )
    model = loaded.model
    generator = torch.Generator().manual_seed(spec.seed)
    batches = shuffled_batches(len(examples), spec.batch_size, generator)

    def next_batch() -> tuple[torch.Tensor, torch.Tensor]:
        return pad_batch([examples[i] for i in next(batches).tolist()])

    log(f"sft: {len(examples)} conversations, {spec.steps} steps of {spec.batch_size}")
    summary = train_loop("sft", model, next_batch, spec, log)
    save_state_dict(model, out_pth)
    summary.update(
        conversations=len(examples),
        epochs=round(spec.steps * min(spec.batch_size, len(examples)) / len(examples), 2),
        spec=asdict(spec),
    )
    return summary
