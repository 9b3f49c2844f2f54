"""The demo's quality checks, on hand-made result files (the real demo build: the benchmark)."""

from __future__ import annotations

import json

from mminfer.demo.quality import korean_share, quality_checks


def test_korean_share_counts_hangul_spaces_and_punctuation():
    assert korean_share("민수는 학교에 갔다.") == 1.0
    assert korean_share("abcd") == 0.0
    assert korean_share("민수 ab") == 0.6


def write_results(folder, answers_low, distinct, open_survivors, sharp_survivors):
    files = {
        "same.json": {"same_ids": True, "text": "민수는 학교에 갔다."},
        "count.json": {"fed_with_cache": 10, "fed_without_cache": 20}
        | {"formula_with_cache": 10, "formula_without_cache": 20},
        "kvbytes.json": {"measured_bytes": 8, "formula_bytes": 8},
        "temp.json": {
            "0.3": {
                "samples": 30,
                "distinct": distinct[0],
                "answers": [
                    {"answer": a, "count": answers_low.count(a)} for a in sorted(set(answers_low))
                ],
            },
            "1.0": {"samples": 30, "distinct": distinct[1], "answers": []},
            "1.5": {"samples": 30, "distinct": distinct[2], "answers": []},
        },
        "topp_detail.json": {
            "positions": {
                "open": {"survivors": dict(zip(["0.5", "0.9", "0.99"], open_survivors))},
                "sharp": {"survivors": dict(zip(["0.5", "0.9", "0.99"], sharp_survivors))},
            }
        },
    }
    for name, data in files.items():
        (folder / name).write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


def test_quality_checks_pass_a_good_demo_and_fail_where_the_bar_is_missed(tmp_path):
    good = ["유자차예요."] * 25 + ["배예요."] * 5
    write_results(tmp_path, good, [3, 12, 25], [10, 50, 100], [1, 1, 3])
    assert all(check["ok"] for check in quality_checks(tmp_path, "유자차").values())
    bad = ["유자차예요."] * 20 + ["배예요."] * 10
    write_results(tmp_path, bad, [12, 12, 19], [10, 50, 100], [1, 60, 3])
    failed = {name for name, check in quality_checks(tmp_path, "유자차").items() if not check["ok"]}
    assert failed == {
        "specialty_at_low_temperature",
        "distinct_grows_with_temperature",
        "distinct_at_high_temperature",
        "open_position_keeps_more_candidates",
    }
