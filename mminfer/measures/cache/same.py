"""same.json: greedy generation with and without the cache, the same ids? Its record and facts.

Pure Python, no torch, like every module of mminfer.records: the report, plot and comparison
jobs read it without the model code.
"""

from __future__ import annotations

from dataclasses import dataclass

from mminfer.records import FirstDifference, PretrainPrompt, RunInfo, within_rounding
from mminfer.records.sentences import Sentence


@dataclass
class Same:
    """same.json: are the greedy tokens the same with and without the cache?"""

    same_ids: bool
    ids: list[int]  # the new tokens with the cache
    prompt_len: int
    new_tokens: int
    ids_without_cache: list[int]
    max_abs_logit_diff: float  # over the steps up to the first difference
    first_difference: FirstDifference | None
    text: str  # ids, decoded
    ids_past_tokenizer: int  # ids at or past the tokenizer's end: 0, or the job stops
    prompt: PretrainPrompt
    run: RunInfo


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


def rounding_sized(same: Same) -> bool | None:
    """Where the ids part: whether the paths' rounding explains the step's margin (None: the same
    ids)."""
    if same.same_ids:
        return None
    difference = same.first_difference
    return within_rounding(difference.max_abs_logit_diff, difference.max_abs_logit, same.run.dtype)


def ids_compared(same: Same) -> str | None:
    """ "equal": the two paths' new ids, token for token; else where they part, "rounding" (the
    paths' rounding explains it) or "suspect" (it does not); None: no step to name."""
    if same.same_ids and same.ids == same.ids_without_cache:
        return "equal"
    if same.first_difference is None:
        return None
    return "rounding" if rounding_sized(same) else "suspect"


def paths_compared(same: Same) -> str | None:
    """The details' sentence: with the same ids, "bitwise" (the logits too) or "apart" (they
    differ; "apart_float32_cpu" where the run's own precision was float32 on the CPU: half
    precision or a GPU parts the paths by more rounding); else :func:`ids_compared`'s finding."""
    if not same.same_ids:
        return ids_compared(same)
    if same.max_abs_logit_diff == 0:
        return "bitwise"
    float32_cpu = same.run.dtype == "float32" and same.run.device == "cpu"
    return "apart_float32_cpu" if float32_cpu else "apart"


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
