"""sampler.json: the sampler, not the cache, decides which answer comes out. Record, facts."""

from __future__ import annotations

from dataclasses import dataclass

from mminfer.records import ChatPrompt, RunInfo
from mminfer.records.claims import Claim, claim


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


def sampler_facts(sampler: SamplerCheck) -> dict:
    """sampler.json: all answers identical with and without the cache (one seed)?"""
    return vars(sampler) | {
        "all_identical": sampler.identical_with_and_without_cache == sampler.samples,
        "seed_changes_answers": sampler.differ_with_second_seed > 0,
        "differing": sampler.samples - sampler.identical_with_and_without_cache,
        "same_with_second_seed": sampler.samples - sampler.differ_with_second_seed,
        # float32 on a CPU: the two paths' rounding rarely parts a draw, so a difference there
        # points at the cached path
        "float32_on_cpu": sampler.run.dtype == "float32" and sampler.run.device == "cpu",
        "claims": sampler_claims(sampler),
    }


def sampler_claims(sampler: SamplerCheck) -> dict[str, Claim]:
    """``all_identical``: every sample the same with and without the cache, token for token;
    ``seed_changes``: the second seed changed some (the sampler, not the cache, decides);
    ``seed_changes_nothing``: it changed none; ``differed``: some samples differed by the cache,
    the first difference named."""
    identical = sampler.identical_with_and_without_cache
    return {
        "all_identical": claim(
            "sampler.all_identical",
            identical == sampler.samples and sampler.first_difference is None,
            samples=sampler.samples,
        ),
        "seed_changes": claim(
            "sampler.seed_changes",
            sampler.differ_with_second_seed > 0,
            differ=sampler.differ_with_second_seed,
        ),
        "seed_changes_nothing": claim(
            "sampler.seed_changes_nothing",
            sampler.differ_with_second_seed == 0,
        ),
        "differed": claim(
            "sampler.differed",
            identical < sampler.samples and sampler.first_difference is not None,
            differing=sampler.samples - identical,
        ),
    }
