"""sampler.json: the sampler, not the cache, decides which answer comes out. Record, facts."""

from __future__ import annotations

from dataclasses import dataclass

from mminfer.records import ChatPrompt, RunInfo
from mminfer.records.sentences import Sentence


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
    """sampler.json and the table's complements: the samples that differed, the ones the second
    seed left the same."""
    return vars(sampler) | {
        "differing": sampler.samples - sampler.identical_with_and_without_cache,
        "same_with_second_seed": sampler.samples - sampler.differ_with_second_seed,
    }


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


WHERE = "({{ sampler.run.dtype }}, {{ sampler.run.device }})"
SAME = "같은 시드면 캐시를 켜든 끄든 답 {{ sampler.samples }}개가 토큰 하나까지 "
DIFFERED = (
    "**같은 시드인데 캐시 유무에 따라"
    " {{ sampler.samples - sampler.identical_with_and_without_cache }}개가 달랐다" + WHERE + "**:"
    " 처음 다른 곳은 샘플 {{ sampler.first_difference.sample }}의"
    " {{ sampler.first_difference.step }}번째 토큰(캐시 사용"
    " {{ sampler.first_difference.token_with_cache }}, 미사용"
    " {{ sampler.first_difference.token_without_cache }})이다. "
)

# The section's sentence (mminfer.records.sentences): sampler.md.j2 asks say("sampler.cache")
# under its heading.
SENTENCES = (
    Sentence(
        "sampler.cache",
        holds=against_cache,
        words={
            "seed_changes": (
                SAME
                + "같았고, 시드를 바꾸자 {{ sampler.differ_with_second_seed }}개가 달라졌다"
                + WHERE
                + ": 어떤 답이 나오는지는 캐시가 아니라 샘플링(온도와 시드)이 정한다."
            ),
            "seed_changes_nothing": (
                SAME + "같았다" + WHERE + ": 이 실행에서 캐시는 답을 바꾸지 않았다."
                " 시드를 바꿔도 달라진 답은 없었다."
            ),
            "differed_on_cpu": (
                DIFFERED + "CPU의 float32에서는 두 경로의 반올림 차이가 뽑기를 가르는 일이 드물어,"
                " 캐시 경로를 의심해야 한다."
            ),
            "differed": (
                DIFFERED + "반정밀도나 GPU에서는 두 경로의 반올림 차이가 확률을 바꿔 뽑기를 가를"
                " 수 있다: CPU의 float32에서 다시 재 볼 것."
            ),
        },
    ),
)
