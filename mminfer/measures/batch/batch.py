"""batch.json: a left-padded batch against each prompt alone. Its record and the facts its
report section reads.

Pure Python, no torch: the report reads the record without the model code.
"""

from __future__ import annotations

from dataclasses import dataclass

from mminfer.records import Glance, PretrainPrompt, RunInfo, within_rounding
from mminfer.records.claims import Claim, claim
from mminfer.records.machine import Contention


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
class BatchTiming:
    """The batch against its rows one after another, interleaved (as time.json)."""

    rows: int
    new_tokens: int
    batch_s: float  # median
    sequential_s: float  # median: every row alone, one after another
    batch_tokens_per_s: float
    sequential_tokens_per_s: float
    speedup: float  # sequential / batch
    batch_faster: bool
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
    threads: int
    cpu_count: int | None
    load_before: list[float] | None
    load_after: list[float] | None
    contention: Contention | None  # during the timed rounds (mminfer.records.machine)


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


def batch_facts(batch: Batch) -> dict:
    """batch.json's facts: each row's verdict with the mask, without it and padded on the right;
    how many of each changed; the timing; the half-precision pitfall."""
    dtype = batch.run.dtype
    cases = {}
    for name, rows in (
        ("mask", batch.rows),
        ("no_mask", batch.no_mask.rows),
        ("right_padding", batch.right_padding.rows),
    ):
        verdicts = [row_verdict(row, dtype) for row in rows]
        cases[name] = {
            "rows": [{"row": row, "verdict": v} for row, v in zip(rows, verdicts)],
            "changed": sum(v in ("changed", "not_finite") for v in verdicts),
            "rounding": sum(v == "rounding" for v in verdicts),
            "same": sum(v == "same" for v in verdicts),
        }
    padded = sum(row.pad > 0 for row in batch.rows)
    table = []
    for index, row in enumerate(batch.rows):
        table.append(
            {
                "prompt_len": row.prompt_len,
                "pad": row.pad,
                "mask": cases["mask"]["rows"][index],
                "no_mask": cases["no_mask"]["rows"][index],
                "right_padding": cases["right_padding"]["rows"][index],
            }
        )
    mask = cases["mask"]
    return {
        "rows": len(batch.rows),
        "padded": padded,
        "new_tokens": batch.new_tokens,
        "pad_id": batch.pad_id,
        "dtype": dtype,
        "device": batch.run.device,
        "table": table,
        "cases": cases,
        "mask_keeps_all": mask["changed"] == 0,
        "mask_rounding_only": mask["changed"] == 0 and mask["rounding"] > 0,
        "no_mask_changed_all_padded": cases["no_mask"]["changed"] == padded,
        "right_changed_all_padded": cases["right_padding"]["changed"] == padded,
        "timing": batch.timing,
        "half": batch.half_precision,
        "half_nan": batch.half_precision is not None and batch.half_precision.rows_not_finite > 0,
        "claims": batch_claims(batch),
    }


def batch_claims(batch: Batch) -> dict[str, Claim]:
    """The section's claims.

    ``every_row_same``: every masked row's ids are its ids alone ("모두 같은 토큰"); ``cheaper``:
    the same result for less, in every round: the slowest batch run beat the fastest one-by-one
    run, both spreads within noisy_cv; ``ranges_meet``: the fastest one-by-one run was no slower
    than the slowest batch run; ``faster`` (the medians' speedup, the verdict ok),
    ``faster_estimate`` (the same from a spread over noisy_cv: an estimate), ``not_faster``.
    """
    timing = batch.timing
    quiet = timing.verdict == "ok"
    faster = timing.batch_s < timing.sequential_s
    slowest_batch = max(timing.batch_runs_s)
    fastest_sequential = min(timing.sequential_runs_s)
    every_same = all(row.same_ids and row.finite for row in batch.rows)
    return {
        "every_row_same": claim(
            "batch.every_row_same",
            every_same,
            rows=len(batch.rows),
        ),
        "cheaper": claim(
            "batch.cheaper",
            every_same and quiet and slowest_batch < fastest_sequential,
            slowest_batch_s=slowest_batch,
            fastest_sequential_s=fastest_sequential,
        ),
        "ranges_meet": claim(
            "batch.ranges_meet",
            fastest_sequential <= slowest_batch,
            slowest_batch_s=slowest_batch,
            fastest_sequential_s=fastest_sequential,
        ),
        "faster": claim(
            "batch.faster",
            quiet and faster,
            speedup=timing.speedup,
        ),
        "faster_estimate": claim(
            "batch.faster_estimate",
            not quiet and faster,
            speedup=timing.speedup,
            cv=max(timing.cv_batch, timing.cv_sequential),
            noisy_cv=timing.noisy_cv,
        ),
        "not_faster": claim(
            "batch.not_faster",
            not faster,
            speedup=timing.speedup,
        ),
    }


def batch_glance(batch: Batch) -> Glance:
    """## 배치와 패딩's row: the masked rows' verdict ("same": every row as alone; "rounding":
    some parted at a near-tie; "not_finite": half precision's NaN; "changed"), the timing's."""
    facts = batch_facts(batch)
    mask = facts["cases"]["mask"]
    if facts["half_nan"]:
        lesson = "not_finite"
    elif mask["changed"] > 0:
        lesson = "changed"
    elif mask["rounding"] > 0:
        lesson = "rounding"
    else:
        lesson = "same"
    return Glance(
        lesson=lesson, verdict=batch.timing.verdict, terms=("padding", "attention_mask", "cv")
    )
