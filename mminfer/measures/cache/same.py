"""same.json: greedy generation with and without the cache, the same ids? Its record.

Pure Python, no torch, like every module of mminfer.records: the report, plot and comparison
jobs read it without the model code. What it decides is decide.py's, beside it.
"""

from __future__ import annotations

from dataclasses import dataclass

from mminfer.records import FirstDifference, PretrainPrompt, RunInfo


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
