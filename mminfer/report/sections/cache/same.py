"""## KV 캐시's opening: same.json's facts, its glance row and its sentences.

The section of the task's first four files (same.md.j2 here, count, time and kvbytes beside it):
whether greedy generation gives the same ids both ways and, where not, where they part and why.
The decisions over same.json's runs are its folder's (mminfer.measures.cache.decide); the glance
row reads time.json and count.json too (the section's joins).
"""

from __future__ import annotations

from mminfer.measures.cache.count import Count
from mminfer.measures.cache.decide import ids_compared, lesson, paths_compared, rounding_sized
from mminfer.measures.cache.same import Same
from mminfer.measures.time.decide import cache_faster
from mminfer.measures.time.time import Timing
from mminfer.records import Glance
from mminfer.records.sentences import Sentence
from mminfer.report.sections.cache.time import time_fixed_cost


def same_facts(same: Same) -> dict:
    """same.json: the same ids? If not, where they part and whether rounding explains it."""
    return {
        "same_ids": same.same_ids,
        "prompt_len": same.prompt_len,
        "new_tokens": same.new_tokens,
        "max_abs_logit_diff": same.max_abs_logit_diff,
        "logits_equal": same.max_abs_logit_diff == 0,
        "first_difference": same.first_difference,
        "rounding_sized": rounding_sized(same),
        "run": same.run,
    }


PARTED = (
    "**`same_ids = false`**: 캐시를 쓴 경로와 안 쓴 경로가 {{ same.first_difference.step }}번째"
    " 단계(0부터)에서 다른 토큰을 골랐다({{ same.first_difference.token_with_cache }} 대"
    " {{ same.first_difference.token_without_cache }})."
)


APART = (
    "두 경로의 로짓은 최대 {{ same.max_abs_logit_diff|sig }} 달랐지만 이 실행에서는 어느 단계의"
    " `argmax`도 바꾸지 못했다."
)


MARGINS = (
    "그 단계의 1위−2위 로짓 차이: 캐시 사용 {{ same.first_difference.margin_with_cache|sig }},"
    " 미사용 {{ same.first_difference.margin_without_cache|sig }}. 두 경로의 로짓 차이: 최대"
    " {{ same.first_difference.max_abs_logit_diff|sig }}."
)


# The section's sentences (mminfer.records.sentences): same.md.j2 asks say("same.ids") to open
# ## KV 캐시 and say("same.paths") in its folded method.
SENTENCES = (
    Sentence(
        "same.ids",
        holds=ids_compared,
        words={
            "equal": (
                "캐시를 쓰든 안 쓰든 그리디로 생성한 새 토큰 {{ same.new_tokens }}개가 모두"
                " 같고(`same_ids = true`),"
            ),
            "rounding": PARTED
            + (
                " 그 단계의 1위와 2위 로짓이 거의 같아 두 경로의 반올림 차이가 `argmax`를 뒤집은"
                " 것이다: 원인은 캐시가 아니라 수치 정밀도({{ same.run.dtype }},"
                " {{ same.run.device }})다."
            ),
            "suspect": PARTED
            + (
                " **1위와 2위의 차이가 두 경로의 로짓 차이보다 훨씬 커서 반올림으로는 설명되지"
                " 않는다: 캐시 경로를 의심해야 한다.**"
            ),
        },
    ),
    Sentence(
        "same.paths",
        holds=paths_compared,
        words={
            "bitwise": "두 경로의 로짓도 비트 단위로 같다.",
            "apart": APART,
            "apart_float32_cpu": APART
            + (
                " 반정밀도나 GPU에서는 두 경로의 반올림 차이가 더 커서 거의 동점인 자리의 토큰이"
                " 바뀔 수 있다."
            ),
            "rounding": MARGINS
            + (
                " 캐시 자체는 같은 K, V를 돌려주지만, 캐시 없는 경로는 전체 시퀀스에 fused SDPA를,"
                " 캐시 경로는 한 토큰에 명시적 softmax를 쓰므로 반올림이 다르다."
            ),
            "suspect": MARGINS,
        },
    ),
)


def same_time_count_glance(same: Same, time: Timing, count: Count | None = None) -> Glance:
    """## KV 캐시's row: the task's three numbers (tokens, time, bytes) and what they teach.

    The lesson: decide.lesson over the ids and time.json's cache_faster. The row's numbers come
    from the sections' facts. Its terms: the token ratio, the speedup, the CV and the fixed cost
    the section states."""
    found = lesson(same, cache_faster(time), trusted=time.verdict != "untrusted")
    terms = ("token_ratio", "speedup", "cv")
    if count is not None and time_fixed_cost(time, count) is not None:
        terms += ("fixed_cost",)
    return Glance(lesson=found, verdict=time.verdict, terms=terms)
