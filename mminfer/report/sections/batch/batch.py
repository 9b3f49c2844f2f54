"""## 배치와 패딩: batch.json's facts, glance row and sentences."""

from __future__ import annotations

from mminfer.measures.batch.batch import Batch
from mminfer.measures.batch.decide import cheaper, every_row_same, faster, row_verdict
from mminfer.records import Glance
from mminfer.records.sentences import Sentence, recomputed


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


SPEEDUP = "{{ batch.timing.speedup_interval|x_in }}"


ROUNDS = "라운드 {{ batch.timing.runs_done }}회"


# The section's sentences (mminfer.records.sentences), asked for by batch.md.j2.
SENTENCES = (
    Sentence(
        "batch.every_row_same",
        holds=every_row_same,
        words=(
            "왼쪽 패딩에 attention_mask를 주면 {{ batch.rows|length }}개 행 모두 혼자 생성한 것과"
            " 같은 토큰을 냈다({{ batch.run.dtype }}, {{ batch.run.device }})."
        ),
    ),
    Sentence(
        "batch.cheaper",
        holds=cheaper,
        words="배치는 마스크가 맞을 때 같은 결과를 싸게 얻는 방법이다.",
        check=recomputed,
    ),
    Sentence(
        "batch.faster",
        holds=faster,
        words={
            "faster": (
                "배치가 한 행씩보다 " + SPEEDUP + " 빨랐다(라운드마다 짝지은 비율, " + ROUNDS + ")."
            ),
            "same": "배치와 한 행씩이 잡음 문턱(5 %) 안에서 같았다: "
            + SPEEDUP
            + "("
            + ROUNDS
            + ").",
            "slower": (
                "이 실행에서는 배치가 한 행씩보다 느렸다: " + SPEEDUP + "(" + ROUNDS + "). 배치의"
                " 프리필은 패딩까지 계산한다."
            ),
            "undecided": (
                ROUNDS
                + "로는 배치가 한 행씩보다 빠른지 가를 수 없다: 라운드마다 짝지은 비율이 "
                + SPEEDUP
                + "로 1을 사이에 둔다."
            ),
        },
        check=recomputed,
    ),
)
