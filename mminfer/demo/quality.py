"""The demo's quality bar, checked on the result files of a real run.

Used by the benchmark script and by the opt-in full-demo test: a report whose numbers mean
something.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

from mminfer.io import read_json


def korean_share(text: str) -> float:
    """Share of characters that are Hangul, whitespace or punctuation."""
    if not text:
        return 0.0
    good = 0
    for char in text:
        is_hangul = (
            "\uac00" <= char <= "\ud7a3"
            or "\u1100" <= char <= "\u11ff"
            or "\u3130" <= char <= "\u318f"
        )
        if is_hangul or char.isspace() or unicodedata.category(char).startswith("P"):
            good += 1
    return good / len(text)


def quality_checks(outdir: str | Path, specialty: str) -> dict[str, dict]:
    """Each check: {"value": what was measured, "bar": the requirement, "ok": bool}."""
    outdir = Path(outdir)
    same, count = read_json(outdir / "same.json"), read_json(outdir / "count.json")
    kv, temp = read_json(outdir / "kvbytes.json"), read_json(outdir / "temp.json")
    detail = read_json(outdir / "topp_detail.json")
    low, mid, high = list(temp)[:3]
    correct = sum(a["count"] for a in temp[low]["answers"] if specialty in a["answer"])
    distinct = [temp[key]["distinct"] for key in (low, mid, high)]
    open_survivors = detail["positions"]["open"]["survivors"]
    sharp_survivors = detail["positions"]["sharp"]["survivors"]
    share = korean_share(same["text"])
    return {
        "greedy_korean_share": {"value": round(share, 3), "bar": ">= 0.9", "ok": share >= 0.9},
        "specialty_at_low_temperature": {
            "value": correct,
            "bar": f">= 24 of {temp[low]['samples']} contain '{specialty}' at T={low}",
            "ok": correct >= 24,
        },
        "distinct_grows_with_temperature": {
            "value": distinct,
            "bar": "strictly increasing",
            "ok": distinct[0] < distinct[1] < distinct[2],
        },
        "distinct_at_high_temperature": {
            "value": distinct[2],
            "bar": f">= 20 at T={high}",
            "ok": distinct[2] >= 20,
        },
        "open_position_keeps_more_candidates": {
            "value": {"open": open_survivors, "sharp": sharp_survivors},
            "bar": "open > sharp at every p",
            "ok": all(open_survivors[p] > sharp_survivors[p] for p in open_survivors),
        },
        "same_ids": {"value": same["same_ids"], "bar": "true", "ok": same["same_ids"] is True},
        "fed_counts_follow_formulas": {
            "value": [count["fed_with_cache"], count["fed_without_cache"]],
            "bar": [count["formula_with_cache"], count["formula_without_cache"]],
            "ok": (count["fed_with_cache"], count["fed_without_cache"])
            == (count["formula_with_cache"], count["formula_without_cache"]),
        },
        "bytes_follow_formula": {
            "value": kv["measured_bytes"],
            "bar": kv["formula_bytes"],
            "ok": kv["measured_bytes"] == kv["formula_bytes"],
        },
    }
