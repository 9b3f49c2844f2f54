"""Sampled answers: the draws of MiniMind's generate after a seed, and what they are cut to.

temp.json's draws (top_k=0, top_p=1.0, the temperature alone shaping the distribution), the
sampler check's, top-k's and the repetition penalty's all come from :func:`sampled_rows`, so that
one seed's draws are one another's; an answer is a draw's new tokens cut before the first eos.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from dataclasses import dataclass

import torch

from mminfer.model.counting import ForwardRecorder
from mminfer.records import Answer, ChatPrompt, PretrainPrompt, RunInfo


@dataclass(frozen=True)
class Draws:
    """How many answers are drawn, how long, after which seed: config section temp's samples,
    new_tokens and seed."""

    samples: int
    new_tokens: int
    seed: int


@dataclass(frozen=True)
class Sampler:
    """generate's sampling knobs of one set of draws (top_p is 1.0): top_k 0 and
    repetition_penalty 1.0 are off."""

    temperature: float
    top_k: int = 0
    repetition_penalty: float = 1.0


@dataclass(frozen=True)
class Prompted:
    """A model opened on its prompt: what a sampling measurement draws from and records."""

    model: object
    tokenizer: object
    prompt_ids: list[int]
    prompt: ChatPrompt | PretrainPrompt  # where prompt_ids came from
    device: object
    run: RunInfo


def temperature_key(temperature: float) -> str:
    """The JSON key of a temperature or p, as the task writes them: 0.3 -> "0.3", 1 -> "1.0"."""
    return repr(float(temperature))


def cut_at_eos(ids: list[int], eos_id: int) -> list[int]:
    return ids[: ids.index(eos_id)] if eos_id in ids else ids


def decoded_answers(tokenizer, rows: list[list[int]]) -> list[str]:
    """Each draw's answer: its new tokens cut before their first eos, decoded."""
    eos = tokenizer.eos_token_id
    answers = []
    for row in rows:
        answers.append(tokenizer.decode(cut_at_eos(row, eos), skip_special_tokens=False))
    return answers


def answer_ids_past_tokenizer(tokenizer, rows: list[list[int]]) -> int:
    """The ids at or past the tokenizer's end in the draws' answers (cut before their eos)."""
    eos = tokenizer.eos_token_id
    return sum(tokenizer.past_end(cut_at_eos(row, eos)) for row in rows)


@torch.inference_mode()
def sampled_rows(
    *,
    model,
    prompt_ids: list[int],
    sampler: Sampler,
    draws: Draws,
    eos_token_id: int | None,
    use_cache: bool,
    device,
    recorder: ForwardRecorder | None = None,
) -> list[list[int]]:
    """The new tokens of ``draws.samples`` answers drawn after torch.manual_seed(draws.seed), as
    temp.json's (top_k=0, top_p=1.0); ``sampler``'s repetition_penalty 1.0 is generate's default,
    off; its top_k 0 off.

    A draw ends at ``eos_token_id`` (None: never) or after ``draws.new_tokens``.

    ``recorder``, where given, watches the model's forward calls while it draws.
    """
    torch.manual_seed(draws.seed)
    input_ids = torch.tensor([prompt_ids], dtype=torch.long, device=device)
    watching = contextlib.nullcontext()
    if recorder is not None:
        watching = recorder.watching(model)
    with watching:
        output = model.generate(
            input_ids,
            do_sample=True,
            top_k=sampler.top_k,
            top_p=1.0,
            temperature=sampler.temperature,
            repetition_penalty=sampler.repetition_penalty,
            max_new_tokens=draws.new_tokens,
            num_return_sequences=draws.samples,
            eos_token_id=eos_token_id,
            use_cache=use_cache,
        )
    return output[:, len(prompt_ids) :].tolist()


@torch.inference_mode()
def next_token_logits(model, prompt_ids: list[int], device) -> torch.Tensor:
    """The last position's logits, (vocab,), in float32."""
    input_ids = torch.tensor([prompt_ids], dtype=torch.long, device=device)
    return model(input_ids).logits[0, -1, :].float()


@dataclass(frozen=True)
class CountedAnswers:
    """The answers of one set of draws, counted: how many differ, the most common one's share."""

    distinct: int
    samples: int
    top_share: float  # the most common answer's share
    answers: list[Answer]  # each distinct answer with its count, most common first


def counted_answers(answers: list[str]) -> CountedAnswers:
    """The distinct answers among ``answers`` (decoded draws), most common first."""
    counts = Counter(answers)
    _, top_count = counts.most_common(1)[0]
    return CountedAnswers(
        distinct=len(counts),
        samples=len(answers),
        top_share=top_count / len(answers),
        answers=[Answer(answer=text, count=count) for text, count in counts.most_common()],
    )
