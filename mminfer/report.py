"""Step 7: report.md, in Korean, from the JSON files the other rules wrote.

Every number here is read from those files; nothing is measured or assumed in this module. The
sections ``## KV 캐시``, ``## 온도`` and ``## top-p`` are the task's; optional results (the length
sweep, the capacity table, plots) are added when their files are given.
"""

from __future__ import annotations

import logging
import os
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


# Relative logit differences that rounding alone produces between the two attention paths, per dtype
# (a generous bound: float32 agrees to ~1e-6 relative, half precision to ~1e-2).
ROUNDING_TOLERANCE = {"float32": 1e-3, "bfloat16": 1e-1, "float16": 2e-2}


def rounding_sized(diff: dict, dtype: str) -> bool:
    """Is the logit difference between the paths at the first differing step no larger than rounding?"""
    scale = 1.0 + diff.get("max_abs_logit", 0.0)
    return diff["max_abs_logit_diff"] <= ROUNDING_TOLERANCE.get(dtype, 1e-1) * scale


def provenance_section(same: dict, temp: dict, cache_script: str | None = None) -> list[str]:
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
    if cache_script:
        lines += [f"same.json과 count.json을 쓴 스크립트: [`{cache_script}`]({cache_script}) — mminfer가 설치된 곳에서 "
                  f"손으로도 돌릴 수 있다(`python {cache_script} --help`).", ""]
    return lines


def pct(value: float) -> str:
    return f"{value * 100:.1f}%"


def load_text(before: list | None, after: list | None) -> str:
    if not before or not after:
        return "부하 평균은 이 시스템에서 읽을 수 없다"
    return f"1분 부하 평균 {before[0]:g} → {after[0]:g}"


def timing_verdict_sentence(timing: dict, token_ratio: float) -> str:
    """The plain words on how far time.json can be trusted (its verdict, see mminfer.timing)."""
    spread = f"흩어짐(변동계수)은 캐시 사용 {pct(timing['cv_with_cache'])}, 미사용 {pct(timing['cv_without_cache'])}"
    extra = (f"(처음 {timing['runs']}회로는 의심스러워 {timing['extra_rounds']}라운드를 더 쟀다)"
             if timing["extra_rounds"] else "")
    if timing["verdict"] == "ok":
        return f"{spread}로 둘 다 {pct(timing['noisy_cv'])} 이하다{extra}: 이 중앙값은 믿을 만하다."
    if timing["verdict"] == "noisy":
        return (f"**측정이 흔들렸다**: {spread}로 {pct(timing['noisy_cv'])}를 넘어 상한인 방법당 {timing['runs_done']}회까지 "
                f"쟀다. 캐시 쪽이 빠르다는 결론은 그대로지만 배수는 어림으로만 읽을 것.")
    return (f"**이 시간은 믿으면 안 된다**: 방법당 {timing['runs_done']}회까지 재고도 캐시 쪽이 빠르지 않게 나왔다({spread}). "
            f"캐시 경로는 넣는 토큰이 {token_ratio:.1f}배 적으므로, 이것은 측정 중 기계가 바빴다는 뜻이지 캐시의 성질이 "
            "아니다. 조용한 기계에서 `snakemake -R time`으로 다시 재라.")


def time_lines(timing: dict, token_ratio: float) -> list[str]:
    """The timing table, its conditions, how noisy it was, and tokens against time."""
    trusted = timing["verdict"] != "untrusted"
    speedup = f"**{timing['speedup']:.2f}배**" if trusted else f"{timing['speedup']:.2f}배 (믿을 수 없음)"
    lines = [
        "| with_cache_s | without_cache_s | speedup | 스레드 |",
        "| --- | --- | --- | --- |",
        f"| {timing['with_cache_s']:.4f} | {timing['without_cache_s']:.4f} | {speedup} | {timing['threads']} |",
        "",
        f"방법마다 워밍업 {timing['warmup']}회 뒤, 캐시 사용·미사용을 번갈아 {timing['runs_done']}회씩 잰 중앙값"
        f"(time.perf_counter). 스레드 {timing['threads']}개(코어 {timing['cpu_count']}개), "
        f"{load_text(timing['load_before'], timing['load_after'])}. 스레드 수가 다르면 배수도 다르다: 두 실행을 비교할 때는 "
        "스레드부터 맞출 것.",
        "",
        timing_verdict_sentence(timing, token_ratio),
        "",
        "### 토큰 비율과 시간 비율",
        "",
        "| 토큰 비율 (fed_without_cache ÷ fed_with_cache) | 시간 비율 (speedup) |",
        "| --- | --- |",
        f"| {token_ratio:.1f}배 | {speedup} |",
        "",
    ]
    if not trusted:
        lines.append("시간 측정을 믿을 수 없으므로 두 비율의 비교는 생략한다.")
    elif timing["speedup"] < token_ratio:
        lines.append("토큰은 훨씬 적게 넣지만 시간은 그만큼 줄지 않는다: 작은 모델에서는 단계마다 드는 고정 비용"
                     "(파이썬 루프, 층마다의 커널 호출)이 토큰 수와 무관하게 매 단계 들기 때문이다.")
    else:
        lines.append("시간 비율이 토큰 비율 이상이다: 캐시 없는 경로는 어텐션이 길이의 제곱으로 커지므로 토큰 수보다 더 "
                     "빨리 느려질 수 있다.")
    return lines + [""]


def kv_section(same: dict, count: dict, timing: dict, kv: dict) -> list[str]:
    p, n = count["prompt_len"], count["new_tokens"]
    token_ratio = count["fed_without_cache"] / count["fed_with_cache"]
    lines = ["## KV 캐시", "", "### 캐시가 있든 없든 같은 토큰인가", ""]
    if same["same_ids"]:
        lines.append(
            f"프롬프트 {p}토큰 뒤에 그리디로 {n}토큰을 두 번 생성했다(캐시 사용/미사용). **same_ids = true**: "
            f"새 토큰 {n}개가 모두 같다. "
            + (f"두 경로의 마지막 위치 로짓 차이는 최대 {same['max_abs_logit_diff']:.3g}로, 어텐션 커널이 달라 생기는 "
               "반올림 차이일 뿐 argmax를 바꾸지 못했다."
               if same["max_abs_logit_diff"] > 0 else "두 경로의 로짓도 비트 단위로 같다.")
        )
    else:
        diff = same["first_difference"]
        lines.append(
            f"**same_ids = false**: {diff['step']}번째 단계(0부터)에서 처음 갈렸다 — 캐시 사용 시 토큰 "
            f"{diff['token_with_cache']}, 미사용 시 {diff['token_without_cache']}. 그 단계의 1위-2위 로짓 차이는 "
            f"캐시 사용 {diff['margin_with_cache']:.3g}, 미사용 {diff['margin_without_cache']:.3g}이고 두 경로의 "
            f"로짓 차이는 최대 {diff['max_abs_logit_diff']:.3g}다. "
            + ("캐시 자체는 같은 K, V를 돌려주지만, 캐시 없는 경로는 전체 시퀀스에 fused SDPA를, 캐시 경로는 한 토큰에 "
               "명시적 softmax를 쓰므로 반올림이 다르고, 거의 동점인 위치에서 argmax가 뒤집힌 것이다. 원인은 캐시가 "
               "아니라 수치 정밀도다."
               if rounding_sized(diff, same.get("run", {}).get("dtype", "float32")) else
               "**1위와 2위의 차이가 두 경로의 로짓 차이보다 훨씬 커서 반올림으로는 설명되지 않는다: 캐시 경로를 "
               "의심해야 한다.**")
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
    ]
    lines += time_lines(timing, token_ratio)
    lines += [
        "### 캐시의 실제 바이트",
        "",
        f"토큰 {kv['tokens']}개(시드 {kv['seed']}의 무작위 토큰)를 use_cache=True로 넣은 뒤 past_key_values의 "
        f"모든 텐서 바이트를 더했다.",
        "",
        "| measured_bytes | formula_bytes | k_shape | dtype |",
        "| --- | --- | --- | --- |",
        f"| **{kv['measured_bytes']}** | {kv['formula_bytes']} | {tuple(kv['k_shape'])} | {kv['dtype']} |",
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
    distinct = [summary["distinct"] for summary in temp.values()]
    lines = [
        "## 온도",
        "",
        f"SFT 모델에 질문 「{first['run']['question']}」을 채팅 형식으로 넣고, 온도마다 torch.manual_seed"
        f"({first['run']['seed']})로 다시 시드를 맞춘 뒤 {first['samples']}개씩 샘플링했다(top_k=0, top_p=1.0). "
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
        + ("드문 토큰이 한 번 뽑히면 작은 모델은 제자리로 돌아오지 못해 답이 갈라진다."
           if all(a < b for a, b in zip(distinct, distinct[1:])) else
           "이 모델에서는 서로 다른 답의 수가 온도에 따라 늘지 않았다: 표의 숫자를 그대로 읽을 것."),
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
            f"{sharp['entropy_bits']:.2f}비트. "
            + ("주어 뒤에는 동사·장소·시간 등 갈래가 많아 후보가 많이 남고, 답이 정해진 자리에서는 몇 개만 남는다."
               if all(value > sharp["survivors"][key] for key, value in topp.items())
               else "이 모델에서는 두 위치의 차이가 뚜렷하지 않다: 열린 위치에서 더 많은 후보가 남으려면 모델이 "
                    "문맥을 배워야 한다."),
            "",
        ]
    else:
        lines += ["| p | 생존 후보 |", "| --- | --- |"] + [f"| {k} | **{v}** |" for k, v in topp.items()] + [""]
    return lines


def fmt_ms(seconds: float | None) -> str:
    return "—" if seconds is None else f"{seconds * 1000:.2f} ms"


def fmt_us(seconds: float) -> str:
    return f"{seconds * 1e6:.3g} µs"


def sweep_section(sweep: dict, picture: str | None) -> list[str]:
    points, fit = sweep["points"], sweep["fit"]
    longest = points[-1]
    steps_with, steps_without = sweep["steps"]["with_cache_s"], sweep["steps"]["without_cache_s"]
    counts_match = all(p["fed_with_cache"] == p["formula_with_cache"] and p["fed_without_cache"] == p["formula_without_cache"]
                       for p in points)
    lines = [
        "## 길이에 따른 비용",
        "",
        f"같은 프롬프트(P = {sweep['prompt_len']}) 뒤에 캐시 사용/미사용으로 {sweep['longest']}토큰을 그리디 생성하면서 "
        f"forward 호출마다 시각을 쟀다(방법마다 {sweep['runs']}회, 두 방법을 번갈아; 그 전에 짧은 워밍업 "
        f"{sweep['warmup']}회; 스레드 {sweep['threads']}개, {load_text(sweep['load_before'], sweep['load_after'])}). "
        "그리디 생성은 결정적이라 N토큰 생성은 긴 생성의 처음 N단계와 같다: 각 길이의 시간은 처음 N단계 시간의 합이고, "
        "넣은 토큰 수는 " + ("모든 길이에서 공식과 같다." if counts_match else "**공식과 다르다.**"),
        "",
        "| N | fed_with_cache | fed_without_cache | 토큰 비율 | with_cache_s | without_cache_s | 시간 비율 |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for point in points:
        lines.append(f"| {point['new_tokens']} | {point['fed_with_cache']:,} | {point['fed_without_cache']:,} | "
                     f"{point['token_ratio']:.1f}배 | {point['with_cache_s']:.4f} | {point['without_cache_s']:.4f} | "
                     f"{point['time_ratio']:.2f}배 |")
    lines += [
        "",
        f"첫 토큰까지 시간(프리필, TTFT): {fmt_ms(sweep['ttft_s'])}. 캐시 경로의 이후 토큰당 디코드 시간: "
        f"{fmt_ms(sweep['decode_s_per_token'])}. 캐시 없는 경로는 단계마다 지금까지의 전부를 다시 계산하므로 한 단계가 "
        f"첫 단계 {fmt_ms(steps_without[0])}에서 마지막 단계 {fmt_ms(steps_without[-1])}로 늘어나고, 캐시 경로의 한 "
        f"단계는 {fmt_ms(steps_with[1] if len(steps_with) > 1 else steps_with[0])} 안팎에 머문다"
        + (" (그림의 단계별 곡선)." if picture else "."),
        "",
        f"각 단계의 시간을 `{fit['model']}`로 두 방법의 모든 단계({fit['steps']}개)에 최소제곱으로 맞췄다(계수는 음수가 "
        "되지 않게; 어텐션 쌍은 인과 마스크 아래 계산하는 (질의, 키) 쌍의 수).",
        "",
        "| 단계당 고정비 (캐시 사용) | 단계당 고정비 (캐시 미사용) | 토큰당 비용 | 어텐션 쌍당 비용 | R² |",
        "| --- | --- | --- | --- | --- |",
        f"| {fmt_ms(fit['fixed_s_with_cache'])} | {fmt_ms(fit['fixed_s_without_cache'])} | {fmt_us(fit['per_token_s'])} | "
        f"{fit['per_pair_s'] * 1e9:.3g} ns | {fit['r2']:.3f} |",
        "",
    ]
    if longest["new_tokens"] > 1 and longest["time_ratio"] <= 1:
        lines += [f"**가장 긴 길이(N = {longest['new_tokens']})에서도 캐시 쪽이 빠르지 않았다**: 측정 중 기계가 바빴거나, "
                  "모델과 프롬프트가 너무 작아 한 단계의 비용이 거의 고정비뿐이다. 이 절의 시간은 믿지 말 것.", ""]
    residual = fit["median_relative_residual"]
    where = (f"이 적합은 컨텍스트 {fit['measured_context'][0]}–{fit['measured_context'][1]}토큰에서 잰 단계에 대한 "
             f"것이다(단계 예측의 상대 오차 중앙값: 캐시 사용 {pct(residual['with_cache'])}, 미사용 "
             f"{pct(residual['without_cache'])}).")
    if fit["held_at_zero"]:
        where += f" 음수로 나오려던 항({', '.join(fit['held_at_zero'])})은 0으로 두었다."
    if not fit["holds"]:
        lines += [where + " **적합이 단계 시간을 잘 설명하지 못한다**: 아래 해석과 예측은 어림으로도 쓰지 말 것.", ""]
    else:
        at_longest = next(row for row in sweep["predictions"] if row["new_tokens"] == sweep["longest"])
        a_w, b = fit["fixed_s_with_cache"], fit["per_token_s"]
        lines.append(where + " 캐시 경로의 한 단계는 토큰 하나만 넣지만 단계당 고정비를 모두 낸다"
                     + (f" — 토큰 하나의 비용의 {a_w / b:.0f}배다" if b > 0 else "")
                     + f". N = {sweep['longest']}에서 캐시 경로 시간의 {at_longest['fixed_share_with_cache']:.0%}가 "
                     f"고정비라서, 시간 비율({longest['time_ratio']:.1f}배)은 토큰 비율({longest['token_ratio']:.1f}배)에 "
                     "훨씬 못 미친다.")
        furthest = sweep["predictions"][-1]
        if not furthest["measured"]:
            lines.append(f"잰 길이 밖으로 N = {furthest['new_tokens']:,}까지 외삽하면(잰 가장 긴 길이의 4배까지, "
                         "max_position_embeddings를 넘지 않게) 시간 비율은 "
                         f"{furthest['time_ratio']:.1f}배, 토큰 비율은 {furthest['token_ratio']:.1f}배다 — 어림이다.")
        lines.append("")
    if picture:
        lines += [f"![길이에 따른 시간과 토큰]({picture})", ""]
    return lines


def capacity_section(capacity: dict) -> list[str]:
    per_token = capacity["bytes_per_token"]
    lines = [
        "## 카드당 사용자 수",
        "",
        "한 시퀀스의 캐시는 `2 × 층 × KV 헤드 × head_dim × 바이트 × 컨텍스트`이고, 카드에 들어가는 시퀀스 수는 "
        "`floor((메모리 − 가중치) / (토큰당 KV 바이트 × 컨텍스트))`다. 토큰당 KV 바이트는 각 dtype으로 실제 캐시를 "
        f"채워 잰 값이다(층 {capacity['layers']}, KV 헤드 {capacity['kv_heads']}, head_dim {capacity['head_dim']}).",
        "",
        "| dtype | 토큰당 KV 바이트 (측정) | 공식 | 가중치 바이트 |",
        "| --- | --- | --- | --- |",
    ]
    for dtype, entry in per_token.items():
        lines.append(f"| {dtype} | {entry['measured']:,} | {entry['formula']:,} | {fmt_bytes(capacity['weight_bytes'][dtype])} |")
    memories = capacity["memory_gib"]
    lines += ["", "| dtype | 컨텍스트 | " + " | ".join(f"{m:g} GiB" for m in memories) + " |",
              "| --- | --- |" + " --- |" * len(memories)]
    by_key = {(row["dtype"], row["context"], row["memory_gib"]): row["sequences"] for row in capacity["rows"]}
    for dtype in per_token:
        for context in capacity["contexts"]:
            cells = [f"{by_key[(dtype, context, m)]:,}" for m in memories]
            lines.append(f"| {dtype} | {context:,} | " + " | ".join(cells) + " |")
    check = capacity["batch_check"]
    lines += [
        "",
        f"예측 확인: 시퀀스 {check['batch']}개 × {check['context']}토큰의 캐시를 실제로 만들어 재면 "
        f"{check['measured_bytes']:,} B, 예측은 {check['predicted_bytes']:,} B"
        + (" — 같다." if check["matches"] else " — **다르다.**")
        + " 활성값, CUDA 컨텍스트, 할당기 여유분은 빠진 상한이다.",
        "",
    ]
    return lines


def pictures_section(temp_png: str | None, topp_png: str | None) -> list[str]:
    lines = []
    if temp_png or topp_png:
        lines += ["## 그림", ""]
    if temp_png:
        lines += [f"![온도별 서로 다른 답]({temp_png})", ""]
    if topp_png:
        lines += [f"![top-p: 정렬된 확률과 누적 질량]({topp_png})", ""]
    return lines


def render_report(same: dict, count: dict, timing: dict, kv: dict, temp: dict, topp: dict,
                  topp_detail: dict | None = None, sweep: dict | None = None, capacity: dict | None = None,
                  pictures: dict | None = None, cache_script: str | None = None) -> str:
    """report.md; ``pictures`` maps sweep/temp/topp to a PNG path relative to the report, ``cache_script``
    is the task's cache.py relative to it."""
    pictures = pictures or {}
    lines = ["# MiniMind generate 측정: KV 캐시와 샘플링", ""]
    lines += provenance_section(same, temp, cache_script)
    lines += kv_section(same, count, timing, kv)
    lines += temp_section(temp)
    lines += topp_section(topp, topp_detail)
    if sweep:
        lines += sweep_section(sweep, pictures.get("sweep"))
    if capacity:
        lines += capacity_section(capacity)
    lines += pictures_section(pictures.get("temp"), pictures.get("topp"))
    return "\n".join(lines).rstrip() + "\n"


def relative_to(path, folder: Path) -> str:
    return Path(os.path.relpath(Path(path).resolve(), folder.resolve())).as_posix()


def report_job(inputs: dict, out) -> str:
    """Read the JSON files named in ``inputs`` and write report.md to ``out`` (PNGs linked relatively)."""
    folder = Path(out).parent
    loaded = {name: read_json(path) for name, path in inputs.items() if path and str(path).endswith(".json")}
    pictures = {name[: -len("_png")]: relative_to(path, folder) for name, path in inputs.items()
                if str(path).endswith(".png")}
    text = render_report(loaded["same"], loaded["counts"], loaded["time"], loaded["kvbytes"], loaded["temp"],
                         loaded["topp"], loaded.get("topp_detail"), loaded.get("sweep"), loaded.get("capacity"),
                         pictures, relative_to(inputs["cache_script"], folder) if inputs.get("cache_script") else None)
    write_text_atomic(out, text)
    log.info("wrote %s (%d lines)", out, text.count("\n"))
    return text
