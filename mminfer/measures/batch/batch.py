"""batch.json: a left-padded batch against each prompt alone. Its record and the facts its
report section reads.

Pure Python, no torch: the report reads the record without the model code.
"""

from __future__ import annotations

from dataclasses import dataclass

from mminfer.records import PretrainPrompt, RunInfo, within_rounding
from mminfer.records.interval import Interval, look_level, ratio_decision, ratio_interval
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


def row_verdict(row: BatchRow, dtype: str) -> str:
    """One row against its prompt alone: "same" ids; "rounding" (they part where the logit gap
    is within ROUNDING_TOLERANCE: a near-tie); "changed"; "not_finite"."""
    if not row.finite:
        return "not_finite"
    if row.same_ids:
        return "same"
    if within_rounding(row.max_logit_diff, row.max_abs_logit, dtype):
        return "rounding"
    return "changed"


def every_row_same(batch: Batch) -> bool:
    """batch.every_row_same: every masked row's ids are its ids alone, every logit finite."""
    return all(row.same_ids and row.finite for row in batch.rows)


FASTER = {"yes": "faster", "same": "same", "no": "slower", "undecided": "undecided"}


def faster(batch: Batch) -> str:
    """batch.faster's variant, from the recorded decision of the per-round speedup
    (``batch_faster``): "faster", "same", "slower" or "undecided"."""
    return FASTER[batch.timing.batch_faster]


def cheaper(batch: Batch) -> bool:
    """batch.cheaper: the same result (every row as alone) and the batch decided faster."""
    return every_row_same(batch) and batch.timing.batch_faster == "yes"


def faster_in_runs(batch: Batch) -> str:
    """The speedup's variant the raw runs give: each round's sequential / batch, decided at the
    level of the timing's looks (mminfer.records.interval)."""
    timing = batch.timing
    level = look_level(timing.runs, timing.max_runs)
    ratio = ratio_interval(timing.sequential_runs_s, timing.batch_runs_s, level)
    found = {"above": "faster", "same": "same", "below": "slower", "undecided": "undecided"}
    return found[ratio_decision(ratio)]


def faster_supported(batch: Batch, chosen: str) -> bool:
    """batch.faster's check: the raw runs give the variant written."""
    return faster_in_runs(batch) == chosen


def cheaper_supported(batch: Batch) -> bool:
    """batch.cheaper's check: every row the same ids, finite, and the raw runs decide the batch
    faster."""
    same = all(row.same_ids and row.finite for row in batch.rows)
    return same and faster_in_runs(batch) == "faster"
