"""What the model jobs open: the checkpoint and its tokenizer, and the prompt the job measures."""

from __future__ import annotations

from mminfer.loading import LoadedModel, ModelSpec, open_with_tokenizer
from mminfer.prompts import chat_prompt, task_prompt
from mminfer.records import ChatPrompt, PretrainPrompt
from mminfer.tokenizer import Tokenizer


def open_for_task_prompt(
    pretrain,
    tokenizer,
    val_data,
    docs: int,
    prompt_tokens: int,
    new_tokens: int,
    model: ModelSpec,
    threads: int | None,
    keys: str,
) -> tuple[LoadedModel, Tokenizer, list[int], PretrainPrompt]:
    """The pretrained model, its tokenizer, the task's greedy prompt and where it came from.

    The prompt must leave room for ``new_tokens`` in the model's positions; ``keys`` names the
    config keys that asked for them.
    """
    loaded, loaded_tokenizer = open_with_tokenizer(pretrain, tokenizer, model, threads, "pretrain")
    max_positions = loaded.config.max_position_embeddings
    prompt_ids = task_prompt(
        loaded_tokenizer, val_data, docs, prompt_tokens, new_tokens, max_positions, keys
    )
    prompt = PretrainPrompt(
        tokenizer=str(tokenizer), val_data=str(val_data), docs=docs, prompt_tokens=prompt_tokens
    )
    return loaded, loaded_tokenizer, prompt_ids, prompt


def open_for_chat(
    sft,
    sft_lora,
    tokenizer,
    question: str,
    seed: int,
    chatml_fallback: bool,
    model: ModelSpec,
    threads: int | None,
) -> tuple[LoadedModel, Tokenizer, list[int], ChatPrompt]:
    """The SFT model (with its LoRA, if any), its tokenizer, the chat prompt of ``question`` and
    where it came from."""
    loaded, loaded_tokenizer = open_with_tokenizer(sft, tokenizer, model, threads, "sft", sft_lora)
    prompt_ids, template = chat_prompt(loaded_tokenizer, question, chatml_fallback)
    prompt = ChatPrompt(
        tokenizer=str(tokenizer),
        template=template,
        question=question,
        prompt_len=len(prompt_ids),
        seed=seed,
    )
    return loaded, loaded_tokenizer, prompt_ids, prompt
