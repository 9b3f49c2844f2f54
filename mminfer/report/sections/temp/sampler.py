"""## 온도's sampler check: sampler.json's facts and sentences (the sampler is not the cache)."""

from __future__ import annotations

from mminfer.measures.temp.decide import against_cache
from mminfer.measures.temp.sampler import SamplerCheck
from mminfer.records.sentences import Sentence


def sampler_facts(sampler: SamplerCheck) -> dict:
    """sampler.json and the table's complements: the samples that differed, the ones the second
    seed left the same."""
    return vars(sampler) | {
        "differing": sampler.samples - sampler.identical_with_and_without_cache,
        "same_with_second_seed": sampler.samples - sampler.differ_with_second_seed,
    }


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
