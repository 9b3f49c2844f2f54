"""Step 7: report.md, in Korean, from the JSON files the other rules wrote.

Every number here is read from those files; nothing is measured or assumed in this module. The
sections ``## KV 캐시``, ``## 온도`` and ``## top-p`` are the task's; optional results (the length
sweep, the capacity table, plots) are added when their files are given.
"""

from __future__ import annotations

import logging
from pathlib import Path

from mminfer.io import read_json, write_text_atomic

log = logging.getLogger("mminfer")

MODEL_SET_LABELS = {
    "course": "MiniMind 강의 체크포인트 (/opt/mm)",
    "demo": "내장 데모 모델 (이 워크플로가 직접 만든 합성 한국어 코퍼스로 학습)",
}


def fmt_bytes(n: int) -> str:
    if n >= 1 << 20:
        return f"{n:,} B ({n / (1 << 20):.2f} MiB)"
    if n >= 1 << 10:
        return f"{n:,} B ({n / (1 << 10):.1f} KiB)"
    return f"{n:,} B"


def short_sha(sha: str) -> str:
    return sha[:16]


def provenance_section(same: dict, temp: dict) -> list[str]:
    pre = same["run"]
    sft = next(iter(temp.values()))["run"]
    label = MODEL_SET_LABELS.get(pre["model_set"], pre["model_set"])
    device = pre["device_name"] if pre["device"] == "cuda" else "cpu"
    lines = [
        "## 실행 정보",
        "",
        f"- 모델 세트: **{pre['model_set']}** — {label}",
        f"- 백엔드: `{pre['backend']}` (`minimind` = MiniMind 원본 소스의 generate, `builtin` = mminfer의 호환 구현)",
        f"- 장치: {device}, dtype {pre['dtype']}; torch {pre['torch']}, Python {pre['python']}",
        "",
        "| 입력 | 경로 | sha256 (앞 16자) |",
        "| --- | --- | --- |",
        f"| 사전학습 체크포인트 | `{pre['checkpoint']}` | `{short_sha(pre['sha256'])}` |",
        f"| SFT 체크포인트 | `{sft['checkpoint']}` | `{short_sha(sft['sha256'])}` |",
        f"| 토크나이저 | `{pre.get('tokenizer', '')}` | |",
        f"| 검증 데이터 (앞 {pre.get('docs', '?')}개 문서) | `{pre.get('val_data', '')}` | |",
        "",
        (f"모델 구성: 층 {pre['config']['num_hidden_layers']}개, hidden {pre['config']['hidden_size']}, "
         f"어텐션 헤드 {pre['config']['num_attention_heads']}개, KV 헤드 {pre['config']['num_key_value_heads']}개, "
         f"head_dim {pre['config']['head_dim']}, 어휘 {pre['config']['vocab_size']}."),
        "",
    ]
    return lines


def kv_section(same: dict, count: dict, timing: dict, kv: dict) -> list[str]:
    p, n = count["prompt_len"], count["new_tokens"]
    token_ratio = count["fed_without_cache"] / count["fed_with_cache"]
    lines = ["## KV 캐시", "", "### 캐시가 있든 없든 같은 토큰인가", ""]
    if same["same_ids"]:
        lines.append(
            f"프롬프트 {p}토큰 뒤에 그리디로 {n}토큰을 두 번 생성했다(캐시 사용/미사용). **same_ids = true**: "
            f"새 토큰 {n}개가 모두 같다. 두 경로의 마지막 위치 로짓 차이는 최대 "
            f"{same['max_abs_logit_diff']:.3g}로, 어텐션 커널이 달라 생기는 반올림 차이일 뿐 argmax를 바꾸지 못했다."
        )
    else:
        diff = same["first_difference"]
        lines.append(
            f"**same_ids = false**: {diff['step']}번째 단계(0부터)에서 처음 갈렸다 — 캐시 사용 시 토큰 "
            f"{diff['token_with_cache']}, 미사용 시 {diff['token_without_cache']}. 그 단계의 1위-2위 로짓 차이는 "
            f"캐시 사용 {diff['margin_with_cache']:.3g}, 미사용 {diff['margin_without_cache']:.3g}이고 두 경로의 "
            f"로짓 차이는 최대 {diff['max_abs_logit_diff']:.3g}다. 캐시 자체는 같은 K, V를 돌려주지만, 캐시 없는 "
            f"경로는 전체 시퀀스에 fused SDPA를, 캐시 경로는 한 토큰에 명시적 softmax를 쓰므로 반올림이 다르고, "
            f"거의 동점인 위치에서 argmax가 뒤집힌 것이다. 원인은 캐시가 아니라 수치 정밀도다."
        )
    lines += [
        "",
        "### forward에 들어간 토큰 수",
        "",
        "| 방법 | 측정 | 공식 | 공식 값 |",
        "| --- | --- | --- | --- |",
        f"| 캐시 사용 (fed_with_cache) | {count['fed_with_cache']:,} | P + (N − 1) = {p} + {n - 1} | "
        f"{count['formula_with_cache']:,} |",
        f"| 캐시 미사용 (fed_without_cache) | {count['fed_without_cache']:,} | N·P + N(N − 1)/2 = {n}·{p} + "
        f"{n}·{n - 1}/2 | {count['formula_without_cache']:,} |",
        "",
        f"P = prompt_len = {p} (bos 포함), N = new_tokens = {n}. 캐시가 있으면 첫 단계에 프롬프트 전체, 그 뒤로는 "
        "한 토큰씩만 넣는다. 캐시가 없으면 매 단계 지금까지의 전부를 다시 넣는다.",
        "",
        "### 시간",
        "",
        "| with_cache_s | without_cache_s | speedup |",
        "| --- | --- | --- |",
        f"| {timing['with_cache_s']:.4f} | {timing['without_cache_s']:.4f} | **{timing['speedup']:.2f}배** |",
        "",
        f"방법마다 워밍업 {timing['warmup']}회를 버리고 {timing['runs']}회 잰 중앙값(time.perf_counter), "
        f"스레드 {timing['threads']}개.",
        "",
        "### 토큰 비율과 시간 비율",
        "",
        "| 토큰 비율 (fed_without_cache ÷ fed_with_cache) | 시간 비율 (speedup) |",
        "| --- | --- |",
        f"| {token_ratio:.1f}배 | {timing['speedup']:.2f}배 |",
        "",
        "토큰은 훨씬 적게 넣지만 시간은 그만큼 줄지 않는다: 작은 모델에서는 단계마다 드는 고정 비용"
        "(파이썬 루프, 층마다의 커널 호출)이 토큰 수와 무관하게 매 단계 들기 때문이다.",
        "",
        "### 캐시의 실제 바이트",
        "",
        f"토큰 {kv['tokens']}개(시드 {kv.get('seed', 0)}의 무작위 토큰)를 use_cache=True로 넣은 뒤 past_key_values의 "
        f"모든 텐서 바이트를 더했다.",
        "",
        "| measured_bytes | formula_bytes | k_shape | dtype |",
        "| --- | --- | --- | --- |",
        f"| **{kv['measured_bytes']:,}** | {kv['formula_bytes']:,} | {tuple(kv['k_shape'])} | {kv['dtype']} |",
        "",
        f"공식: 2 × 층 {kv['layers']} × 토큰 {kv['tokens']} × KV 헤드 {kv['kv_heads']} × head_dim {kv['head_dim']} × "
        f"{kv['bytes_per_element']}바이트 = {fmt_bytes(kv['formula_bytes'])}. "
        + ("측정값과 공식이 정확히 같다. " if kv["measured_bytes"] == kv["formula_bytes"] else "**측정값과 공식이 다르다.** ")
        + f"K는 repeat_kv 전에 저장되므로 헤드 축이 {kv['kv_heads']}다. repeat_kv 뒤(헤드 {kv['heads']}개)의 크기로 "
        f"셌다면 {fmt_bytes(kv['after_repeat_kv_bytes'])}로 {kv['heads'] // kv['kv_heads']}배 부풀었을 것이다. "
        f"토큰 하나당 {kv['bytes_per_token']:,}바이트.",
        "",
    ]
    if kv.get("allocator_bytes") is not None:
        lines += [f"CUDA 할당기 기준 증가량: {fmt_bytes(kv['allocator_bytes'])}.", ""]
    return lines


def temp_section(temp: dict) -> list[str]:
    first = next(iter(temp.values()))
    lines = [
        "## 온도",
        "",
        f"SFT 모델에 질문 「{first['run']['question']}」을 채팅 형식으로 넣고, 온도마다 torch.manual_seed"
        f"({first['run'].get('seed', 0)})로 다시 시드를 맞춘 뒤 {first['samples']}개씩 샘플링했다(top_k=0, top_p=1.0). "
        "답은 <|im_end|> 앞에서 잘랐다.",
        "",
        "| 온도 | distinct | 가장 흔한 답의 비율 | distinct-2 | 가장 흔한 답 |",
        "| --- | --- | --- | --- | --- |",
    ]
    for key, summary in temp.items():
        common = summary["answers"][0]["answer"].replace("|", "\\|").replace("\n", " ")
        lines.append(f"| {key} | **{summary['distinct']}** / {summary['samples']} | {summary['top_share']:.0%} | "
                     f"{summary['distinct_2']:.2f} | {common} |")
    lines += [
        "",
        "온도는 로짓을 나누므로, 낮으면 가장 그럴듯한 답에 확률이 몰리고 높으면 드문 토큰도 뽑힌다. "
        "드문 토큰이 한 번 뽑히면 작은 모델은 제자리로 돌아오지 못해 답이 갈라진다.",
        "",
    ]
    return lines


def topp_section(topp: dict, detail: dict | None) -> list[str]:
    lines = ["## top-p", ""]
    if detail:
        open_pos, sharp = detail["positions"]["open"], detail["positions"]["sharp"]
        lines += [
            f"[bos] + 「{open_pos['prefix']}」 뒤 마지막 위치의 로짓에 MiniMind의 top-p 규칙(내림차순 누적 확률이 p를 "
            "넘는 자리부터 자르되 한 칸 밀어 처음 넘는 토큰은 남기고, 1위는 항상 남김)을 적용한 생존 후보 수. "
            f"비교용으로 날카로운 위치 「{sharp['prefix']}」도 함께 적었다.",
            "",
            f"| p | 「{open_pos['prefix']}」 뒤 (topp.json) | 「{sharp['prefix']}」 뒤 |",
            "| --- | --- | --- |",
        ]
        for key, value in topp.items():
            lines.append(f"| {key} | **{value}** | {sharp['survivors'][key]} |")
        lines += [
            "",
            f"엔트로피: 「{open_pos['prefix']}」 뒤 {open_pos['entropy_bits']:.2f}비트, 「{sharp['prefix']}」 뒤 "
            f"{sharp['entropy_bits']:.2f}비트. 주어 뒤에는 동사·장소·시간 등 갈래가 많아 후보가 많이 남고, "
            "답이 정해진 자리에서는 몇 개만 남는다.",
            "",
        ]
    else:
        lines += ["| p | 생존 후보 |", "| --- | --- |"] + [f"| {k} | **{v}** |" for k, v in topp.items()] + [""]
    return lines


def render_report(same: dict, count: dict, timing: dict, kv: dict, temp: dict, topp: dict,
                  topp_detail: dict | None = None, extra_sections: list[list[str]] | None = None) -> str:
    lines = ["# MiniMind generate 측정: KV 캐시와 샘플링", ""]
    lines += provenance_section(same, temp)
    lines += kv_section(same, count, timing, kv)
    lines += temp_section(temp)
    lines += topp_section(topp, topp_detail)
    for section in extra_sections or []:
        lines += section
    return "\n".join(lines).rstrip() + "\n"


def report_job(inputs: dict, out) -> str:
    """Read the JSON files named in ``inputs`` and write report.md to ``out``."""
    loaded = {name: read_json(path) for name, path in inputs.items() if path}
    text = render_report(loaded["same"], loaded["counts"], loaded["time"], loaded["kvbytes"], loaded["temp"],
                         loaded["topp"], loaded.get("topp_detail"))
    write_text_atomic(out, text)
    log.info("wrote %s (%d lines)", out, text.count("\n"))
    return text


def results_dir(path) -> Path:
    return Path(path).parent
