"""batch.json: a left-padded batch against each prompt alone. Its record; what it decides is
decide.py's, beside it.

Pure Python, no torch: the report reads the record without the model code.
"""

from __future__ import annotations

from dataclasses import dataclass

from mminfer.records import PretrainPrompt, RunInfo
from mminfer.records.interval import Interval
from mminfer.records.machine import TimedOn


@dataclass
class BatchRow:
    """One prompt of the batch against the same prompt generated alone."""

    prompt_len: int  # its real tokens, bos included
    pad: int  # the pad ids put before it (left padding) or after it (right padding)
    same_ids: bool  # its new ids equal the ids generated alone
    first_divergence: int | None  # 0-based step of the first different id; None: none
    max_logit_diff: float | None  # max |logit gap| up to and with that step; None: not finite
    max_abs_logit: float  # the largest |logit| alone over those steps: rounding's scale
    finite: bool  # every logit of the row finite at every step


@dataclass
class BatchCase:
    """The same batch generated another way (no mask, or right padding)."""

    rows: list[BatchRow]
    changed: int  # rows whose ids differ from alone


@dataclass
class BatchTiming(TimedOn):
    """The batch against its rows one after another, interleaved (as time.json)."""

    rows: int
    new_tokens: int
    batch_s: float  # median
    sequential_s: float  # median: every row alone, one after another
    batch_tokens_per_s: float
    sequential_tokens_per_s: float
    speedup: float  # sequential / batch, of the medians
    batch_interval: Interval  # batch_s and its interval at the per-look level
    sequential_interval: Interval
    speedup_interval: Interval  # the per-round sequential / batch: its median and interval
    batch_faster: str  # speedup_interval decided: "yes" (above 1), "no" (below), "same" (within
    # mminfer.records.interval.SAME_WITHIN of 1) or "undecided" (the rounds cannot say)
    prompt_tokens_batch: int  # rows x the longest prompt: the prefill computes every pad too
    prompt_tokens_sequential: int  # the prompts' own tokens, one after another
    cv_batch: float
    cv_sequential: float
    warmup: int
    runs: int
    max_runs: int
    runs_done: int
    extra_rounds: int
    doubts: list[str]  # spreads over noisy_cv
    verdict: str  # "ok" or "noisy"
    noisy_cv: float
    clock: str  # the clock the runs were read by: "perf_counter", or the tests' jitter
    batch_runs_s: list[float]
    sequential_runs_s: list[float]


@dataclass
class HalfPrecisionMask:
    """What MiniMind's additive mask (-1e9) becomes in a half-precision model's dtype."""

    dtype: str
    mask_value: float | None  # -1e9 in the dtype; None: it is not finite (float16: -inf)
    mask_fits: bool
    rows_not_finite: int  # of the left-padded batch with the mask
    padded_rows: int  # rows with at least one pad


@dataclass
class Batch:
    """batch.json: batching is the same result cheaply, if the mask is right.

    Step 1's prompt and shorter ones from later validation documents, left-padded with the
    tokenizer's pad id and an attention_mask, greedy (top_k=0, top_p=1.0, eos None); each row
    against the same prompt alone. ``no_mask``: the same batch without the mask; ``right_padding``:
    the pads after the prompt (the last position of a short row is a pad).
    """

    rows: list[BatchRow]
    no_mask: BatchCase
    right_padding: BatchCase
    same_ids: bool  # every row with the mask
    pad_id: int
    new_tokens: int
    timing: BatchTiming
    half_precision: HalfPrecisionMask | None  # float16 / bfloat16 only
    prompt: PretrainPrompt  # step 1's (the longest row)
    run: RunInfo
