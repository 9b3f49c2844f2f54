"""sampler.json: the sampler, not the cache, decides which answer comes out. Record, facts."""

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


def against_cache(sampler: SamplerCheck) -> str | None:
    """The samples with the cache against without, one seed: "seed_changes" (all the same, token
    for token, and the second seed changed some: the sampler, not the cache, decides),
    "seed_changes_nothing" (all the same, the second seed changed none), "differed_on_cpu" (some
    differed, the first difference named, in float32 on a CPU, where the two paths' rounding
    rarely parts a draw: suspect the cached path) or "differed" (some differed elsewhere:
    rounding can); None where the count and the first difference disagree."""
    identical = sampler.identical_with_and_without_cache
    if identical == sampler.samples and sampler.first_difference is None:
        return "seed_changes" if sampler.differ_with_second_seed > 0 else "seed_changes_nothing"
    if identical < sampler.samples and sampler.first_difference is not None:
        float32_on_cpu = sampler.run.dtype == "float32" and sampler.run.device == "cpu"
        return "differed_on_cpu" if float32_on_cpu else "differed"
    return None
