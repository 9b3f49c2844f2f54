"""batch.json (mminfer.measures.batch.measure): the prompts (step 1's and shorter ones after it),
left and right
padding with the pad id, every masked row the prompt alone on a CPU in float32, the mask's fate in
half precision (never a crash), bad settings named by key; the section follows its record."""

from __future__ import annotations

import json

import pytest
import torch
from conftest import PRETRAIN_PROMPT
from reportdata import batch_record, batch_row, render_every
from shapes import prompt_of

from mminfer.errors import MminferError
from mminfer.measures.batch.batch import Batch
from mminfer.measures.batch.measure import (
    batch_prompts,
    measure_batch,
    pad_id,
    padded,
    prompt_lengths,
)
from mminfer.records import from_json, to_json
from mminfer.report.sections.batch.batch import batch_facts
from mminfer.timing.ab import Rounds


def measured(model, tokenizer, run, prompts=None):
    prompts = prompts or [prompt_of(30), prompt_of(6), prompt_of(15)]
    return measure_batch(
        model=model,
        tokenizer=tokenizer,
        prompts=prompts,
        new_tokens=8,
        rounds=Rounds(warmup=0, runs=1, max_runs=1),
        device="cpu",
        prompt=PRETRAIN_PROMPT,
        run=run,
    )


def test_the_other_prompts_spread_up_to_step_ones():
    assert prompt_lengths(8, 20, 200) == [20, 46, 71, 97, 123, 149, 174]
    with pytest.raises(MminferError, match="batch.shortest"):
        prompt_lengths(4, 200, 200)


def test_prompts_are_step_ones_then_slices_of_the_later_documents(tiny_tokenizer, tmp_path):
    docs = [{"text": f"가람 마을 {i}번째 이야기. 민수는 시장에 간다. " * 8} for i in range(10)]
    path = tmp_path / "val.jsonl"
    path.write_text("\n".join(json.dumps(d, ensure_ascii=False) for d in docs), encoding="utf-8")
    rows = batch_prompts(tiny_tokenizer, path, 6, 40, 4, 10)
    assert [len(ids) for ids in rows] == [41, 11, 21, 31]
    assert all(ids[0] == tiny_tokenizer.bos_token_id for ids in rows)
    with pytest.raises(MminferError, match="batch.prompts"):
        batch_prompts(tiny_tokenizer, path, 9, 40, 8, 39)  # one later document is too short


def test_padding_goes_left_or_right_with_its_mask():
    ids, mask = padded([[1, 5, 6], [1, 7]], 0, True, "cpu")
    assert ids.tolist() == [[1, 5, 6], [0, 1, 7]] and mask.tolist() == [[1, 1, 1], [0, 1, 1]]
    ids, mask = padded([[1, 5, 6], [1, 7]], 0, False, "cpu")
    assert ids.tolist() == [[1, 5, 6], [1, 7, 0]] and mask.tolist() == [[1, 1, 1], [1, 1, 0]]


def test_the_pad_id_is_the_tokenizers(tiny_tokenizer):
    assert pad_id(tiny_tokenizer) == tiny_tokenizer.backend.token_to_id(
        tiny_tokenizer.config["pad_token"]
    )


def test_every_masked_row_is_the_prompt_alone_in_float32(tiny_model, tiny_tokenizer, tiny_run):
    record = measured(tiny_model, tiny_tokenizer, tiny_run)
    assert record.same_ids and all(row.same_ids and row.finite for row in record.rows)
    assert [row.pad for row in record.rows] == [0, 24, 15]
    assert record.no_mask.rows[0].same_ids  # the row without a pad
    assert record.half_precision is None
    assert from_json(Batch, json.loads(json.dumps(to_json(record)))) == record


def test_float16_gives_the_pitfall_not_a_crash(load_tiny, tiny_tokenizer, tiny_run):
    model = load_tiny(dtype="float16").model
    run = type(tiny_run)(**{**to_json(tiny_run), "dtype": "float16", "lora": None})
    record = measured(model, tiny_tokenizer, run)
    half = record.half_precision
    assert half.dtype == "float16" and not half.mask_fits and half.mask_value is None
    assert half.rows_not_finite == half.padded_rows == 2
    assert record.rows[0].finite and not record.rows[1].finite
    json.dumps(to_json(record), allow_nan=False)  # no NaN reaches the file


def test_bfloat16_holds_the_mask(load_tiny, tiny_tokenizer, tiny_run):
    model = load_tiny(dtype="bfloat16").model
    run = type(tiny_run)(**{**to_json(tiny_run), "dtype": "bfloat16", "lora": None})
    half = measured(model, tiny_tokenizer, run).half_precision
    assert half.mask_fits and half.rows_not_finite == 0
    assert half.mask_value == float(torch.tensor(-1e9).to(torch.bfloat16))


def test_a_changed_masked_row_is_said_and_rounding_is_told_apart():
    record = batch_record()
    record.rows[1] = from_json(type(record.rows[1]), batch_row(21, 180, False, 3, 5.0))
    record.rows[2] = from_json(type(record.rows[2]), batch_row(47, 154, False, 9, 1e-4))
    facts = batch_facts(record)
    assert facts["cases"]["mask"]["changed"] == 1 and facts["cases"]["mask"]["rounding"] == 1
    report = render_every(batch=record)
    assert "attention_mask를 줬는데도 1개 행이 혼자 생성한 것과 달랐다" in report
    assert "10번째 토큰에서 갈림 (반올림 크기)" in report


def test_half_precisions_nan_is_a_visible_warning():
    half = {"dtype": "float16", "mask_value": None, "mask_fits": False}
    half |= {"rows_not_finite": 7, "padded_rows": 7}
    report = render_every(batch=batch_record(dtype="float16", half=half))
    assert "float16는 마스크의 -1e9를 담지 못해 -inf가 된다" in report
