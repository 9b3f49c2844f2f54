"""Step 5: what temperature changes, and the sampler check beside it.

- temperature: the SFT model answers one chat question ``samples`` times per temperature,
  reseeding ``torch.manual_seed(seed)`` before each temperature so that only the temperature
  differs; answers are the new tokens cut before the first eos, decoded;
- the sampler check: the same seed's samples with the cache and without are the same answers
  (the temp rule hands it temperature's cached draws at its temperature, so they are drawn once).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from mminfer.measures.temp.sampler import SampleDifference, SamplerCheck
from mminfer.measures.temp.temp import Temperatures, TemperatureSummary
from mminfer.model.draws import (
    Draws,
    Prompted,
    Sampler,
    answer_ids_past_tokenizer,
    counted_answers,
    decoded_answers,
    sampled_rows,
    temperature_key,
)
from mminfer.model.finite import finite_logits, model_named
from mminfer.records import ChatPrompt, RunInfo


@dataclass(frozen=True)
class TempSettings:
    """What the temp rule measures: config section ``temp`` (its keys are these fields)."""

    question: str  # asked of the SFT model
    temperatures: list[float]
    samples: int  # answers per temperature
    new_tokens: int  # max_new_tokens of each
    seed: int  # torch.manual_seed before each temperature
    chatml_fallback: bool  # a tokenizer without a chat template: ChatML instead of an error

    @property
    def draws(self) -> Draws:
        """The samples, new tokens and seed of every temperature's draws."""
        return Draws(samples=self.samples, new_tokens=self.new_tokens, seed=self.seed)


def temperature_draws(
    *,
    model,
    tokenizer,
    prompt_ids: list[int],
    temperatures: list[float],
    draws: Draws,
    device,
    named: str = "the model",
) -> dict[float, list[list[int]]]:
    """The new tokens of ``draws.samples`` cached draws per temperature, lowest first, each
    temperature reseeded with ``draws.seed`` (so the order changes no draw).

    Temperature alone shapes the distribution: top_k=0, top_p=1.0. Logits that are not finite stop
    the draws with an error naming the model as ``named`` (mminfer.model.finite.model_named).
    """
    eos = tokenizer.eos_token_id
    rows = {}
    for temperature in sorted(temperatures):
        with finite_logits(model, f"{named}, sampling at temperature {temperature}"):
            rows[float(temperature)] = sampled_rows(
                model=model,
                prompt_ids=prompt_ids,
                sampler=Sampler(temperature=temperature),
                draws=draws,
                eos_token_id=eos,
                use_cache=True,
                device=device,
            )
    return rows


def distinct_n(answers: list[str], n: int) -> float:
    """Distinct n-grams over all n-grams of the answers: 1.0 means no repeats.

    The n-grams are of characters, whitespace kept.
    """
    grams = [answer[i : i + n] for answer in answers for i in range(len(answer) - n + 1)]
    return len(set(grams)) / len(grams) if grams else 0.0


def summarize_answers(
    answers: list[str], ids_past_tokenizer: int, prompt: ChatPrompt, run: RunInfo
) -> TemperatureSummary:
    """One temperature of temp.json: distinct answers, the most common one's share, distinct-1/2.

    ``ids_past_tokenizer``: the answers' ids at or past the tokenizer's end (each shown in its
    answer as ⟨id N⟩, :meth:`Tokenizer.decode`).
    """
    counted = counted_answers(answers)
    return TemperatureSummary(
        distinct=counted.distinct,
        samples=counted.samples,
        top_share=counted.top_share,
        distinct_1=distinct_n(answers, 1),
        distinct_2=distinct_n(answers, 2),
        answers=counted.answers,
        ids_past_tokenizer=ids_past_tokenizer,
        prompt=prompt,
        run=run,
    )


def temperature_experiment(
    *, chat: Prompted, temperatures: list[float], draws: Draws
) -> Temperatures:
    """temp.json: {"0.3": {"distinct": n, ...}, ...}, lowest temperature first.

    Each temperature is reseeded, so the order changes no answer; the report and the plot read the
    keys in this order. (The temp rule draws first, :func:`temperature_draws`, to share the draws
    with the sampler check, and summarizes them with :func:`summarize_temperatures`.)
    """
    rows = temperature_draws(
        model=chat.model,
        tokenizer=chat.tokenizer,
        prompt_ids=chat.prompt_ids,
        temperatures=temperatures,
        draws=draws,
        device=chat.device,
        named=model_named(chat.run.checkpoint, chat.run.dtype),
    )
    return summarize_temperatures(chat.tokenizer, rows, chat.prompt, chat.run)


def summarize_temperatures(
    tokenizer, draws: dict[float, list[list[int]]], prompt: ChatPrompt, run: RunInfo
) -> Temperatures:
    """temp.json from :func:`temperature_draws`' rows: each temperature's answers summarized."""
    result = {}
    for temperature, rows in draws.items():
        answers = decoded_answers(tokenizer, rows)
        past_end = answer_ids_past_tokenizer(tokenizer, rows)
        result[temperature_key(temperature)] = summarize_answers(answers, past_end, prompt, run)
    return result


def first_sample_difference(rows_a: list[list[int]], rows_b: list[list[int]]):
    """The first sample, and its first step, where two sets of rows differ (None: they don't)."""
    for sample, (a, b) in enumerate(zip(rows_a, rows_b)):
        for step, (token_a, token_b) in enumerate(zip(a, b)):
            if token_a != token_b:
                return SampleDifference(
                    sample=sample,
                    step=step,
                    token_with_cache=token_a,
                    token_without_cache=token_b,
                )
    return None


def sampler_check(
    *,
    chat: Prompted,
    temperature: float,
    draws: Draws,
    second_seed: int,
    with_cache: list[list[int]] | None = None,
) -> SamplerCheck:
    """sampler.json: the same seed with the cache and without gives the same answers.

    The cache changes the cost, not the result; another seed gives other answers: sampling is which
    result. ``with_cache``: the seed's cached draws at this temperature when they were drawn
    already (temp.json's, :func:`temperature_draws`); drawn here otherwise.
    """
    model = chat.model
    seed = draws.seed
    draw = {
        "model": model,
        "prompt_ids": chat.prompt_ids,
        "sampler": Sampler(temperature=temperature),
        "eos_token_id": chat.tokenizer.eos_token_id,
        "device": chat.device,
    }
    second = dataclasses.replace(draws, seed=second_seed)
    what = (
        f"{model_named(chat.run.checkpoint, chat.run.dtype)}, sampling at temperature {temperature}"
    )
    if with_cache is None:
        with finite_logits(model, f"{what} with the cache, seed {seed}"):
            with_cache = sampled_rows(**draw, draws=draws, use_cache=True)
    with finite_logits(model, f"{what} without the cache, seed {seed}"):
        without_cache = sampled_rows(**draw, draws=draws, use_cache=False)
    with finite_logits(model, f"{what} with the cache, seed {second_seed}"):
        other_seed = sampled_rows(**draw, draws=second, use_cache=True)
    identical = sum(a == b for a, b in zip(with_cache, without_cache))
    differ = sum(a != b for a, b in zip(with_cache, other_seed))
    return SamplerCheck(
        temperature=temperature,
        samples=draws.samples,
        new_tokens=draws.new_tokens,
        seed=seed,
        second_seed=second_seed,
        identical_with_and_without_cache=identical,
        first_difference=first_sample_difference(with_cache, without_cache),
        differ_with_second_seed=differ,
        prompt=chat.prompt,
        run=chat.run,
    )
