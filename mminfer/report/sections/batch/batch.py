"""## 배치와 패딩: batch.json's facts and glance row."""

from __future__ import annotations

from mminfer.measures.batch.batch import Batch
from mminfer.measures.batch.decide import row_verdict
from mminfer.records import Glance


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
        lesson=lesson,
        verdict=batch.timing.verdict,
        terms=("prefill", "padding", "attention_mask", "cv"),
    )
