"""Train a small byte-level BPE tokenizer in MiniMind's layout.

The tokenizer mirrors MiniMind's own: byte-level pre-tokenizer without a
prefix space, byte-level decoder, and three special tokens with fixed ids

* 0 ``<|endoftext|>`` - padding / unknown,
* 1 ``<|im_start|>``  - beginning of a turn (bos),
* 2 ``<|im_end|>``    - end of a turn (eos).

The vocabulary size (config key demo_model.vocab_size) is an upper bound: large
enough that nearly every Hangul syllable of the demo corpus plus its frequent
words get their own token (so 200 tokens cover a few sentences), small enough
that the embedding and output layers of a small model stay cheap to train.

The chat template is our own ChatML-style Jinja template: each message is
rendered as ``<|im_start|>{role}\\n{content}<|im_end|>\\n`` and
``add_generation_prompt`` appends ``<|im_start|>assistant\\n``.  It is meant
to be rendered with ``ImmutableSandboxedEnvironment(trim_blocks=True,
lstrip_blocks=True)`` as Hugging Face ``transformers`` does.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

from mminfer.io import write_text_atomic

DEFAULT_MODEL_MAX_LENGTH = 32768

PAD_TOKEN = "<|endoftext|>"
BOS_TOKEN = "<|im_start|>"
EOS_TOKEN = "<|im_end|>"
SPECIAL_TOKENS = [PAD_TOKEN, BOS_TOKEN, EOS_TOKEN]

# One template line per string so the whitespace is easy to see.  With
# trim_blocks the newline right after a block tag is dropped, so the only
# newlines in the output are the two inside each turn.
CHAT_TEMPLATE = (
    "{% for message in messages %}\n"
    "<|im_start|>{{ message['role'] }}\n"
    "{{ message['content'] }}<|im_end|>\n"
    "{% endfor %}\n"
    "{% if add_generation_prompt %}\n"
    "<|im_start|>assistant\n"
    "{% endif %}\n"
)


def build_tokenizer_model() -> Tokenizer:
    """An untrained tokenizer with MiniMind's BPE pipeline."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    return tokenizer


def tokenizer_config(model_max_length: int = DEFAULT_MODEL_MAX_LENGTH) -> dict:
    """Contents of tokenizer_config.json for a PreTrainedTokenizerFast."""
    added_tokens_decoder = {}
    for token_id, content in enumerate(SPECIAL_TOKENS):
        added_tokens_decoder[str(token_id)] = {
            "content": content,
            "lstrip": False,
            "normalized": False,
            "rstrip": False,
            "single_word": False,
            "special": True,
        }
    return {
        "add_bos_token": False,
        "add_eos_token": False,
        "added_tokens_decoder": added_tokens_decoder,
        "additional_special_tokens": [],
        "bos_token": BOS_TOKEN,
        "eos_token": EOS_TOKEN,
        "pad_token": PAD_TOKEN,
        "unk_token": PAD_TOKEN,
        "clean_up_tokenization_spaces": False,
        "model_max_length": model_max_length,
        "tokenizer_class": "PreTrainedTokenizerFast",
        "chat_template": CHAT_TEMPLATE,
    }


def train_tokenizer(
    texts: Iterable[str],
    vocab_size: int,
    out_dir: str | os.PathLike,
    model_max_length: int = DEFAULT_MODEL_MAX_LENGTH,
) -> Path:
    """Train the BPE on texts and write tokenizer.json + tokenizer_config.json.

    Returns out_dir (a folder ``PreTrainedTokenizerFast.from_pretrained``
    can load).  The same texts (in the same order) give the same
    tokenizer.json bytes.
    """
    tokenizer = build_tokenizer_model()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(texts, trainer=trainer)
    for token_id, content in enumerate(SPECIAL_TOKENS):
        if tokenizer.token_to_id(content) != token_id:
            raise RuntimeError(f"special token {content!r} did not get id {token_id}")

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out / "tokenizer.json", tokenizer.to_str(pretty=True))
    config = tokenizer_config(model_max_length)
    write_text_atomic(
        out / "tokenizer_config.json",
        json.dumps(config, ensure_ascii=False, indent=2) + "\n",
    )
    return out
