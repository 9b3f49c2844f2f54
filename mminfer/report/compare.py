"""comparison.md: several models side by side (config key 'models'), from their own records."""

from __future__ import annotations

from mminfer.measures.capacity.capacity import Capacity
from mminfer.measures.conversation.conversation import Conversation
from mminfer.measures.kvbytes.kvbytes import KvBytes
from mminfer.measures.temp.temp import Temperatures
from mminfer.measures.time.time import Timing
from mminfer.measures.topp.topp import TopP
from mminfer.records import RunInfo
from mminfer.report.render import thousands


def users_per_card(capacity: Capacity, dtype: str) -> int | None:
    """The sequences that fit at capacity.json's first memory size and context, in ``dtype``."""
    memory, context = capacity.memory_gib[0], capacity.contexts[0]
    for row in capacity.rows:
        if row.dtype == dtype and row.memory_gib == memory and row.context == context:
            return row.sequences
    return None


def kind_of(run: RunInfo, sft_run: RunInfo) -> str:
    """What kind of MiniMind the model is: dense or MoE, its head, YaRN, the SFT model's LoRA."""
    config = run.config
    parts = ["dense"]
    if config.get("use_moe"):
        parts = [f"MoE {config['num_experts_per_tok']}/{config['num_experts']}"]
    if not config.get("tie_word_embeddings", True):
        parts.append("untied")
    if config.get("rope_scaling"):
        parts.append("YaRN")
    if sft_run.lora is not None:
        parts.append(f"LoRA r{sft_run.lora.rank}")
    return ", ".join(parts)


def comparison_row(
    name: str,
    time: Timing,
    kvbytes: KvBytes,
    temp: Temperatures,
    topp: TopP,
    capacity: Capacity,
    conversation: Conversation,
) -> dict:
    """One model's row of comparison.md, from its records (each parameter a measurement's name).

    What it is, where it ran, the speedup with its verdict and threads, KV bytes per token, users
    per card (in the dtype the model ran in), distinct answers per temperature, survivors per p,
    and the tokens a carried conversation cache saves against recomputing every turn.
    """
    memory, context = capacity.memory_gib[0], capacity.contexts[0]
    sft_run = next(iter(temp.values())).run
    return {
        "model": name,
        "kind": kind_of(kvbytes.run, sft_run),
        "where": f"{kvbytes.run.device}, {kvbytes.dtype}",
        "speedup": time.speedup,
        "verdict": time.verdict,
        "threads": time.threads,
        "kv_bytes_per_token": kvbytes.bytes_per_token,
        "users_per_card": users_per_card(capacity, kvbytes.dtype),
        "card": f"{memory:g} GiB, {context:,} tokens",
        "distinct": {key: summary.distinct for key, summary in temp.items()},
        "survivors": dict(topp),
        "conversation_fed": (conversation.total_fed_recompute, conversation.total_fed_carry),
        "conversation_turns": len(conversation.turns),
        "conversation_same": conversation.same_answers,  # ids equal and logits close
    }


def render_comparison(rows: list[dict]) -> str:
    temperatures = list(rows[0]["distinct"])
    ps = list(rows[0]["survivors"])
    header = ["모델", "종류", "장치, dtype", "speedup (판정, 스레드)", "KV 바이트/토큰"]
    header += [f"카드당 사용자 ({rows[0]['card']})"]
    header += [f"distinct @T={t}" for t in temperatures]
    header += [f"top-p {p} 생존" for p in ps]
    header += [f"대화 {rows[0]['conversation_turns']}턴: 넣은 토큰 (다시 계산 → 캐시 이어 씀)"]
    lines = [
        "# 모델 비교",
        "",
        "각 모델의 결과 폴더에 있는 JSON에서 읽은 값이다. speedup의 판정이 ok가 아니면 그 모델의 "
        "report.md가 시간을 믿지 말라고 하는 까닭을 볼 것.",
        "",
        "| " + " | ".join(header) + " |",
        "|" + " --- |" * len(header),
    ]
    for row in rows:
        cells = [
            row["model"],
            row["kind"],
            row["where"],
            f"{row['speedup']:.2f} ({row['verdict']}, {row['threads']})",
            thousands(row["kv_bytes_per_token"]),
            thousands(row["users_per_card"]),
        ]
        cells += [str(row["distinct"][t]) for t in temperatures]
        cells += [str(row["survivors"][p]) for p in ps]
        recompute, carry = row["conversation_fed"]
        same = "같은 답" if row["conversation_same"] else "**답이 다름**"
        cells += [f"{thousands(recompute)} → {thousands(carry)} ({same})"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
