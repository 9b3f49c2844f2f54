"""The task's prompts, as token ids: the pretrain prompt (steps 1-3), a prefix prompt (top-p's '민수는')
and the chat prompt (the tokenizer's own chat template around one question)."""

from __future__ import annotations

from pathlib import Path

from mminfer.errors import MminferError
from mminfer.io import read_jsonl_field
from mminfer.tokenizer import Tokenizer


def read_documents(path: str | Path, count: int) -> list[str]:
    """The ``text`` of the first ``count`` records of a MiniMind pretrain JSONL file."""
    texts = read_jsonl_field(path, "text", limit=count, kind="validation data")
    for number, text in enumerate(texts, start=1):
        if not isinstance(text, str):
            raise MminferError(
                f"{path} record {number} has a 'text' that is not a string (MiniMind pretrain format)."
            )
    if len(texts) < count:
        raise MminferError(
            f"{path} has {len(texts)} documents; the prompt needs the first {count}."
        )
    return texts


def pretrain_prompt(
    tokenizer: Tokenizer, val_path: str | Path, docs: int, prompt_tokens: int
) -> list[int]:
    """[bos] + the first ``prompt_tokens`` tokens of the first ``docs`` documents joined with spaces."""
    joined = " ".join(read_documents(val_path, docs))
    ids = tokenizer.encode(joined)
    if len(ids) < prompt_tokens:
        raise MminferError(
            f"the first {docs} documents of {val_path} have {len(ids)} tokens; the prompt needs {prompt_tokens}."
        )
    return [tokenizer.bos_token_id] + ids[:prompt_tokens]


def prefix_prompt(tokenizer: Tokenizer, text: str) -> list[int]:
    """[bos] + the tokens of ``text``."""
    return [tokenizer.bos_token_id] + tokenizer.encode(text)


def chat_prompt(tokenizer: Tokenizer, question: str) -> list[int]:
    """The tokens of one user turn in the tokenizer's chat format, ready for the assistant's answer."""
    text = tokenizer.chat_prompt(
        [{"role": "user", "content": question}], add_generation_prompt=True
    )
    return tokenizer.encode(text)
