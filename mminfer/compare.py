"""comparison.md: several models side by side (config key 'models'), from their own result files."""

from __future__ import annotations

import logging

from mminfer.io import read_json, write_text_atomic

log = logging.getLogger("mminfer")

PER_MODEL_FILES = ("time", "kvbytes", "temp", "topp", "capacity")


def comparison_rows(names: list[str], results: dict[str, list[dict]]) -> list[dict]:
    """One row per model: speedup, KV bytes per token, users per card (the first memory size and
    context of capacity.json, in the dtype the model ran in), distinct answers, survivors per p."""
    rows = []
    for index, name in enumerate(names):
        timing, kv = results["time"][index], results["kvbytes"][index]
        temp, topp = results["temp"][index], results["topp"][index]
        capacity = results["capacity"][index]
        memory, context = capacity["memory_gib"][0], capacity["contexts"][0]
        users = next(
            row["sequences"]
            for row in capacity["rows"]
            if row["dtype"] == kv["dtype"]
            and row["memory_gib"] == memory
            and row["context"] == context
        )
        rows.append(
            {
                "model": name,
                "speedup": timing["speedup"],
                "kv_bytes_per_token": kv["bytes_per_token"],
                "dtype": kv["dtype"],
                "users_per_card": users,
                "card": f"{memory:g} GiB, {context:,} tokens",
                "distinct": {key: value["distinct"] for key, value in temp.items()},
                "survivors": dict(topp),
            }
        )
    return rows


def render_comparison(rows: list[dict]) -> str:
    temperatures = list(rows[0]["distinct"])
    ps = list(rows[0]["survivors"])
    header = (
        ["모델", "speedup", "KV 바이트/토큰", "dtype", f"카드당 사용자 ({rows[0]['card']})"]
        + [f"distinct @T={t}" for t in temperatures]
        + [f"top-p {p} 생존" for p in ps]
    )
    lines = [
        "# 모델 비교",
        "",
        "각 모델의 결과 폴더에 있는 JSON에서 읽은 값이다.",
        "",
        "| " + " | ".join(header) + " |",
        "|" + " --- |" * len(header),
    ]
    for row in rows:
        cells = [
            row["model"],
            f"{row['speedup']:.2f}",
            f"{row['kv_bytes_per_token']:,}",
            row["dtype"],
            f"{row['users_per_card']:,}",
        ]
        cells += [str(row["distinct"][t]) for t in temperatures] + [
            str(row["survivors"][p]) for p in ps
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def compare_job(names: list[str], inputs: dict[str, list[str]], out) -> str:
    results = {key: [read_json(path) for path in inputs[key]] for key in PER_MODEL_FILES}
    text = render_comparison(comparison_rows(names, results))
    write_text_atomic(out, text)
    log.info("compared %d models in %s", len(names), out)
    return text
