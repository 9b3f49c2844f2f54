"""## 사용자가 기다리는 시간: latency.json's facts, glance row and sentences, and its joins.

From time.json's own runs; where the uncached step crosses the TPOT limit, from sweep.json.
"""

from __future__ import annotations

from mminfer.measures.sweep.sweep import Sweep
from mminfer.measures.time import decide
from mminfer.measures.time.latency import Latency
from mminfer.measures.time.time import Timing
from mminfer.records import Glance
from mminfer.records.interval import FAMILY_LEVEL, against, median_interval
from mminfer.records.sentences import Sentence, recomputed

CACHED = (
    "캐시를 쓰면 첫 토큰까지(TTFT) {{ latency.with_cache.ttft_interval|ms_in }}, 그 뒤"
    " 토큰마다(TPOT) {{ latency.with_cache.tpot_interval|ms_in }}로 "
)

UNCACHED = "캐시 없이는 TPOT {{ latency.without_cache.tpot_interval|ms_in }}로 "


def latency_facts(latency: Latency, time: Timing | None = None) -> dict:
    """latency.json's figures; ``estimate`` where the time job's verdict is noisy, ``trusted``
    unless untrusted. Where sweep.json's steps pass the TPOT limit is the report's join
    (this module's join): ``crossing`` None here. Its sentences are :data:`SENTENCES`."""
    float32_cpu = latency.run.dtype == "float32" and latency.run.device == "cpu"
    return vars(latency) | {
        "trusted": latency.verdict != "untrusted",
        "estimate": latency.verdict == "noisy",
        "crossing": None,
        "float32_cpu": float32_cpu,
    }


def latency_glance(latency: Latency) -> Glance:
    """``lesson``: the sentence latency.lesson's variant (:func:`lesson`)."""
    return Glance(
        lesson=decide.lesson(latency), verdict=latency.verdict, terms=("ttft", "tpot", "itl")
    )


LIMITS = {
    "within": "대화형 한계 안이다",
    "over": "대화형 한계를 넘는다",
    "undecided": "실행 {{ latency.runs_done }}회로는 대화형 한계 안인지 가를 수 없다",
}


# The section's sentences (mminfer.records.sentences): latency.md.j2 asks for them.
ALONE_SENTENCES = (
    Sentence(
        "latency.cached_limits",
        holds=decide.cached_limits,
        words={variant: CACHED + words + "." for variant, words in LIMITS.items()},
        check=recomputed,
    ),
    Sentence(
        "latency.uncached_limits",
        holds=decide.uncached_limits,
        words={variant: UNCACHED + words + "." for variant, words in LIMITS.items()},
        check=recomputed,
    ),
    Sentence(
        "latency.lesson",
        holds=decide.lesson,
        words={
            "untrusted": "시간을 믿을 수 없다: 조용한 기계에서 다시 잴 것",
            "both_within": "두 경로 모두 대화형 한계 안이다",
            "cached_within": "캐시를 쓸 때만 대화형 한계 안이다",
            "over": "캐시를 써도 대화형 한계를 넘는다",
            "undecided": "실행으로는 대화형 한계 안인지 가를 수 없다",
        },
        check=recomputed,
    ),
    Sentence(
        "latency.uncached_gap",
        holds=decide.uncached_gap,
        words={
            "grows": (
                "캐시 없는 간격은 문맥과 함께 는다: 실행마다 끝 4분의 1 단계의 간격이 첫 4분의"
                " 1보다 길다(단계의 중앙값 {{ latency.without_cache.step_gap_s[0]|ms }} →"
                " {{ latency.without_cache.step_gap_s[-1]|ms }}). 단계마다 넣는 토큰이 P + k개이기"
                " 때문이다(`count.json`의 공식)."
            ),
            "undecided": "캐시 없는 간격이 문맥과 함께 느는지는 이 실행들로는 가를 수 없다.",
        },
        check=recomputed,
    ),
    Sentence(
        "latency.ttft_paths",
        holds=decide.ttft_paths,
        words={
            "same": (
                "두 경로의 TTFT는 같은 P토큰의 프리필이라, 실행마다 짝지은 비가 잡음 문턱(5 %)"
                " 안에서 같았다."
            ),
            "differs": (
                "두 경로의 TTFT는 같은 P토큰의 프리필인데 실행마다 짝지은 비로 갈린다(캐시 사용"
                " {{ latency.with_cache.ttft_interval|ms_in }}, 미사용"
                " {{ latency.without_cache.ttft_interval|ms_in }}):"
                "{% if latency.contention and latency.contention.busy %} 기계가 바빴으니 부하를"
                " 먼저 의심할 것.{% else %} 방법은 같아야 하므로 이 측정으로는 까닭을 가를 수"
                " 없다.{% endif %}"
            ),
            "undecided": (
                "두 경로의 TTFT(같은 P토큰의 프리필)가 같은지는 이 실행들로는 가를 수 없다."
            ),
        },
        check=recomputed,
    ),
    Sentence(
        "latency.tpot_agrees",
        holds=decide.tpot_agrees,
        words={
            "agrees": (
                "캐시 사용 TPOT는 `time.json`의 실행 시간에서 TTFT를 뺀 토큰당 시간과 실행마다"
                " 잡음 문턱(5 %) 안에서 맞는다."
            ),
            "apart": (
                "캐시 사용 TPOT는 `time.json`의 실행 시간에서 TTFT를 뺀 토큰당 시간과 실행마다"
                " **어긋난다**: 마지막 토큰 뒤에 걸린 시간이 있다."
            ),
            "undecided": (
                "캐시 사용 TPOT가 `time.json`의 실행 시간에서 TTFT를 뺀 토큰당 시간과 맞는지는"
                " 이 실행들로는 가를 수 없다."
            ),
        },
        check=recomputed,
    ),
    Sentence(
        "latency.speed",
        holds=decide.speed,
        words={
            "below": (
                "eval_llm.py식 `[Speed]`는 n = {{ latency.with_cache.speed[0].n }}에서"
                " {{ latency.with_cache.speed[0].tokens_per_s|fmt('.0f') }} tok/s로 실행마다"
                " 디코드 속도(1 ÷ TPOT)보다 느리다: 첫 토큰까지의 프리필이 그 시간 안에 있다."
            ),
            "not_below": (
                "eval_llm.py식 `[Speed]`는 n = {{ latency.with_cache.speed[0].n }}에서도"
                " 디코드 속도 이상이다."
            ),
            "undecided": (
                "eval_llm.py식 `[Speed]`가 디코드 속도보다 느린지는 이 실행들로는 가를 수 없다."
            ),
        },
        check=recomputed,
    ),
    Sentence(
        "latency.prefill_most",
        holds=decide.prefill_most,
        words="그 시간의 절반 넘게가 첫 토큰까지다.",
        check=recomputed,
    ),
    Sentence(
        "latency.cost",
        holds=decide.cost,
        words={
            "adds": "`streamer`는 캐시 사용 실행을 라운드마다 짝지은 비로 느리게 한다.",
            "faster": (
                "`streamer` 없는 실행이 오히려 느려, 그 차이는 기계의 흔들림이지 `streamer`의"
                " 몫이 아니다."
            ),
            "same": "그 차이는 잡음 문턱(5 %) 안이다.",
            "undecided": "라운드 {{ latency.cost.rounds }}회로는 그 몫을 가를 수 없다.",
        },
        check=recomputed,
    ),
)


def latency_time_sweep_facts(
    latency: Latency, time: Timing | None = None, sweep: Sweep | None = None
) -> dict:
    """latency.json's facts (mminfer.measures.time.latency.latency_facts, time.json its own
    rule's) and where sweep.json's clocked uncached steps pass the TPOT limit
    (:func:`crossing_of`: the figures latency.sweep_crosses prints)."""
    return latency_facts(latency, time) | {"crossing": crossing_of(latency, sweep)}


def crossing_of(latency: Latency, sweep: Sweep | None) -> dict | None:
    """Where the sweep's clocked uncached steps pass the TPOT limit, each step's interval from its
    runs (one look, FAMILY_LEVEL) against the limit. ``variant``: "crosses" (a step wholly above
    it, every clocked step before it wholly below: ``new_tokens``, ``context`` and ``step_s`` are
    that step's), "never" (every clocked step wholly below: the last clocked one's), "undecided"
    (the first step not wholly below is not wholly above either: that step's). None without a
    trusted sweep or a clocked uncached step."""
    if sweep is None or sweep.verdict == "untrusted":
        return None
    clocked = [
        (step, seconds)
        for step, seconds in enumerate(sweep.steps.without_cache_s)
        if seconds is not None
    ]
    if not clocked:
        return None
    variant, (step, seconds) = "never", clocked[-1]
    for candidate, median in clocked:
        runs = [run[candidate] for run in sweep.steps.without_cache_runs_s]
        side = against(median_interval(runs, FAMILY_LEVEL), latency.tpot_limit_s)
        if side != "below":
            variant = "crosses" if side == "above" else "undecided"
            step, seconds = candidate, median
            break
    return {
        "variant": variant,
        "new_tokens": step + 1,
        "context": sweep.prompt_len + step,
        "step_s": seconds,
    }


def sweep_crossing(latency: Latency, sweep: Sweep | None) -> str | None:
    """latency.sweep_crosses: :func:`crossing_of`'s variant."""
    found = crossing_of(latency, sweep)
    return None if found is None else found["variant"]


CROSSING_FROM = "`## 길이에 따른 비용`의 캐시 없는 단계"


LATENCY_SENTENCES = (
    Sentence(
        "latency.sweep_crosses",
        holds=sweep_crossing,
        words={
            "crosses": (
                CROSSING_FROM + "는 N = {{ crossing.new_tokens }}(문맥 {{ crossing.context }})에서"
                " {{ crossing.step_s|ms }}로 TPOT 한계를 처음 넘었다."
            ),
            "never": (
                "`## 길이에 따른 비용`이 잰 캐시 없는 단계는 N = {{ crossing.new_tokens }}(문맥"
                " {{ crossing.context }})까지 TPOT 한계를 넘지 않았다; 그 너머는 재지 않았다."
            ),
            "undecided": (
                CROSSING_FROM + "가 TPOT 한계를 넘는지는 N = {{ crossing.new_tokens }}(문맥"
                " {{ crossing.context }})에서부터 단계마다의 실행으로는 가를 수 없다."
            ),
        },
        check=recomputed,
    ),
)

# The section's sentences (mminfer.records.sentences), collected by render.sentence_table.
SENTENCES = (*ALONE_SENTENCES, *LATENCY_SENTENCES)
