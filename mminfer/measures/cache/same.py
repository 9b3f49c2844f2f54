"""same.json: greedy generation with and without the cache, the same ids? Its record and facts.

Pure Python, no torch, like every module of mminfer.records: the report, plot and comparison
jobs read it without the model code.
"""

from __future__ import annotations

from dataclasses import dataclass

from mminfer.records import FirstDifference, PretrainPrompt, RunInfo, within_rounding
from mminfer.records.claims import claim


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
    if same.same_ids:
        rounding = None
    else:
        difference = same.first_difference
        rounding = within_rounding(
            difference.max_abs_logit_diff, difference.max_abs_logit, same.run.dtype
        )
    return {
        "same_ids": same.same_ids,
        # "새 토큰 N개가 모두 같고": the two paths' ids, token for token
        "ids_equal": claim(
            "same.ids_equal",
            same.same_ids and same.ids == same.ids_without_cache,
            n=same.new_tokens,
        ),
        # "두 경로의 로짓도 비트 단위로 같다"
        "logits_bitwise": claim("same.logits_bitwise", same.max_abs_logit_diff == 0),
        "prompt_len": same.prompt_len,
        "new_tokens": same.new_tokens,
        "max_abs_logit_diff": same.max_abs_logit_diff,
        "logits_equal": same.max_abs_logit_diff == 0,
        "first_difference": same.first_difference,
        "rounding_sized": rounding,
        # the run's own precision: half precision or a GPU parts paths by more rounding
        "float32_cpu": same.run.dtype == "float32" and same.run.device == "cpu",
        "run": same.run,
    }
