"""The task's prompts, as token ids.

The pretrain prompt (steps 1-3), a prefix prompt (top-p's '민수는') and the chat prompt (the
tokenizer's own chat template around one question).
"""

from __future__ import annotations

from pathlib import Path

from mminfer.errors import MminferError
from mminfer.io import read_jsonl_field
from mminfer.model.tokenizer import Tokenizer

# How a message names the two config keys of the prompt's size: a rule reads them from the config, a
# hand run (scripts/cache.py, ...) from the flags named after them
# (mminfer.workflow.script.add_setting).
DOCS_KEY = "config key 'cache.docs', --docs in a hand run"
PROMPT_TOKENS_KEY = "config key 'cache.prompt_tokens', --prompt-tokens in a hand run"


def read_documents(path: str | Path, count: int) -> list[str]:
    """The ``text`` of the first ``count`` records of a MiniMind pretrain JSONL file."""
    texts = read_jsonl_field(path, "text", limit=count, kind="validation data")
    for number, text in enumerate(texts, start=1):
        if not isinstance(text, str):
            raise MminferError(
                f"{path} record {number} has a 'text' that is not a string (MiniMind's "
                "pretrain format)."
            )
    if len(texts) < count:
        raise MminferError(
            f"{path} has {len(texts)} documents; the prompt needs the first {count} "
            f"({DOCS_KEY}). Lower it, or give a validation file with more documents."
        )
    return texts


def pretrain_prompt(
    tokenizer: Tokenizer, val_path: str | Path, docs: int, prompt_tokens: int
) -> list[int]:
    """[bos] + the first ``prompt_tokens`` tokens of the first ``docs`` documents, joined."""
    joined = " ".join(read_documents(val_path, docs))
    ids = tokenizer.encode(joined)
    if len(ids) < prompt_tokens:
        raise MminferError(
            f"the first {docs} documents of {val_path} have {len(ids)} tokens; the prompt needs "
            f"{prompt_tokens} ({PROMPT_TOKENS_KEY}). Lower it to at most {len(ids)}, or join more "
            f"documents ({DOCS_KEY})."
        )
    return [tokenizer.bos_token_id] + ids[:prompt_tokens]


def prefix_prompt(tokenizer: Tokenizer, text: str) -> list[int]:
    """[bos] + the tokens of ``text``."""
    return [tokenizer.bos_token_id] + tokenizer.encode(text)


def chat_prompt(tokenizer: Tokenizer, question: str, chatml_fallback: bool = False):
    """(token ids, template source) of one user turn in the tokenizer's chat format.

    The prompt is ready for the assistant's answer; see Tokenizer.chat_template for the source.
    """
    template, source = tokenizer.chat_template(chatml_fallback)
    text = tokenizer.chat_prompt([{"role": "user", "content": question}], template=template)
    return tokenizer.encode(text), source


# The config keys whose sum is the task's greedy sequence, named when it does not fit.
TASK_LENGTH_KEYS = "cache.prompt_tokens + cache.new_tokens"


def check_length(needed: int, max_positions: int, keys: str) -> None:
    """A sequence past the model's rotary table is a config error, not a shape traceback."""
    if needed > max_positions:
        raise MminferError(
            f"config keys {keys} ask for sequences of {needed} tokens but the model's "
            f"max_position_embeddings is {max_positions} (config key "
            "'model.max_position_embeddings')."
        )


def task_prompt(
    tokenizer: Tokenizer,
    val_path: str | Path,
    docs: int,
    prompt_tokens: int,
    new_tokens: int,
    max_positions: int,
    keys: str,
) -> list[int]:
    """The task's greedy prompt (:func:`pretrain_prompt`), checked against the positions.

    It must leave room for ``new_tokens`` in the model's positions; ``keys`` names the config keys
    that asked for them.
    """
    prompt_ids = pretrain_prompt(tokenizer, val_path, docs, prompt_tokens)
    check_length(len(prompt_ids) + new_tokens, max_positions, keys)
    return prompt_ids
