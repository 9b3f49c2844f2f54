"""What the model jobs open: the checkpoint and its tokenizer, and the prompt the job measures."""

from __future__ import annotations

from mminfer.loading import LoadedModel, ModelSource, open_with_tokenizer
from mminfer.prompts import chat_prompt, task_prompt
from mminfer.records import ChatPrompt, PretrainPrompt
from mminfer.tokenizer import Tokenizer


def open_for_task_prompt(
    model: ModelSource, prompt: PretrainPrompt, new_tokens: int, keys: str
) -> tuple[LoadedModel, Tokenizer, list[int]]:
    """The pretrained model, its tokenizer and the token ids of the task's greedy prompt.

    The prompt must leave room for ``new_tokens`` in the model's positions; ``keys`` names the
    config keys that asked for them.
    """
    loaded, loaded_tokenizer = open_with_tokenizer(model, prompt.tokenizer)
    prompt_ids = task_prompt(
        loaded_tokenizer,
        prompt.val_data,
        prompt.docs,
        prompt.prompt_tokens,
        new_tokens,
        loaded.config.max_position_embeddings,
        keys,
    )
    return loaded, loaded_tokenizer, prompt_ids


def open_for_chat(
    model: ModelSource, tokenizer, question: str, seed: int, chatml_fallback: bool
) -> tuple[LoadedModel, Tokenizer, list[int], ChatPrompt]:
    """The SFT model (with its LoRA, if any), its tokenizer, the chat prompt's ids and its record.

    The record says where the prompt came from: the tokenizer, its chat template, the question.
    """
    loaded, loaded_tokenizer = open_with_tokenizer(model, tokenizer)
    prompt_ids, template = chat_prompt(loaded_tokenizer, question, chatml_fallback)
    prompt = ChatPrompt(
        tokenizer=str(tokenizer),
        template=template,
        question=question,
        prompt_len=len(prompt_ids),
        seed=seed,
    )
    return loaded, loaded_tokenizer, prompt_ids, prompt
