"""same.json: greedy generation with and without the cache, the same ids? Its record and facts.

Pure Python, no torch, like every module of mminfer.records: the report, plot and comparison
jobs read it without the model code.
"""

from __future__ import annotations

from dataclasses import dataclass

from mminfer.records import FirstDifference, PretrainPrompt, RunInfo, within_rounding


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
