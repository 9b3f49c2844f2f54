"""comparison.md: several models side by side (config key 'models'), from their own records."""

from __future__ import annotations

from mminfer.records import Capacity, KvBytes, Temperatures, Timing, TopP


def users_per_card(capacity: Capacity, dtype: str) -> int | None:
    """The sequences that fit at capacity.json's first memory size and context, in ``dtype``."""
    memory, context = capacity.memory_gib[0], capacity.contexts[0]
    for row in capacity.rows:
        if row.dtype == dtype and row.memory_gib == memory and row.context == context:
            return row.sequences
    return None


def comparison_row(
    name: str,
    timing: Timing,
    kv: KvBytes,
    temp: Temperatures,
    topp: TopP,
    capacity: Capacity,
) -> dict:
    """One model's row of comparison.md.

    Speedup, KV bytes per token, users per card (in the dtype the model ran in), distinct answers
    per temperature, survivors per p.
    """
    memory, context = capacity.memory_gib[0], capacity.contexts[0]
    return {
        "model": name,
        "speedup": timing.speedup,
        "kv_bytes_per_token": kv.bytes_per_token,
        "dtype": kv.dtype,
        "users_per_card": users_per_card(capacity, kv.dtype),
        "card": f"{memory:g} GiB, {context:,} tokens",
        "distinct": {key: summary.distinct for key, summary in temp.items()},
        "survivors": dict(topp),
    }


def render_comparison(rows: list[dict]) -> str:
    temperatures = list(rows[0]["distinct"])
    ps = list(rows[0]["survivors"])
    header = ["모델", "speedup", "KV 바이트/토큰", "dtype", f"카드당 사용자 ({rows[0]['card']})"]
    header += [f"distinct @T={t}" for t in temperatures]
    header += [f"top-p {p} 생존" for p in ps]
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
        cells += [str(row["distinct"][t]) for t in temperatures]
        cells += [str(row["survivors"][p]) for p in ps]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
