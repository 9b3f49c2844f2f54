"""sampler.json: the sampler, not the cache, decides which answer comes out. The record."""

from __future__ import annotations

from dataclasses import dataclass

from mminfer.records import ChatPrompt, RunInfo


@dataclass
class SampleDifference:
    """Where two sampled answers of the same seed first pick different tokens."""

    sample: int  # the row of num_return_sequences
    step: int  # 0-based new token
    token_with_cache: int
    token_without_cache: int


@dataclass
class SamplerCheck:
    """sampler.json: the sampler is not the cache.

    With one seed, the task's samples drawn with the cache and without are the same answers; with a
    second seed they are other answers.
    """

    temperature: float
    samples: int
    new_tokens: int
    seed: int
    second_seed: int
    identical_with_and_without_cache: int  # of samples, token for token
    first_difference: SampleDifference | None
    differ_with_second_seed: int  # of samples, with the cache, against the first seed's
    prompt: ChatPrompt
    run: RunInfo
