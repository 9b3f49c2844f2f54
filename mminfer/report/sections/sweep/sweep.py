"""## 길이에 따른 비용: sweep.json's facts, glance row and sentences, and its joins.

Beside time.json (the sweep's time ratio at the task's N against the task's speedup) and
latency.json (the sweep's prefill against the streamer's first token); a busy machine is named as
the cause of a difference only where one side alone ran busy (mminfer.report.busy).
"""

from __future__ import annotations

from mminfer.measures.sweep import decide
from mminfer.measures.sweep.sweep import Sweep, SweepPoint, clocked_among_first, sweep_rows
from mminfer.measures.time.latency import Latency
from mminfer.measures.time.time import Timing
from mminfer.records import Glance
from mminfer.records.interval import median_interval
from mminfer.records.reconcile import reconcile
from mminfer.records.sentences import Sentence, recomputed
from mminfer.report.busy import busy_alone

RUNS = "실행 {{ sweep.runs }}회"


SWEEP_RUN_DOUBTS = ("with_cache_spread", "without_cache_spread")  # between the runs


SWEEP_STEP_DOUBTS = ("with_cache_spread_within_runs", "without_cache_spread_within_runs")


def sweep_facts(sweep: Sweep) -> dict:
    """sweep.json's facts: counts, the verdict's parts, the fit, the rows of its table, the two
    bands of a noisy run's cached steps and the prefill measured twice here (the first step both
    ways). How time.json's speedup relates to it is this module's join:
    ``against_time`` None here."""
    points, fit = sweep.points, sweep.fit
    longest = points[-1]
    steps_with = sweep.steps.with_cache_s
    steps_without = sweep.steps.without_cache_s
    at_longest = None
    for row in sweep.predictions:
        if row.new_tokens == sweep.longest:
            at_longest = row
    furthest = sweep.predictions[-1]
    last_step = sweep.last_clocked_step()
    counts_match = True
    for point in points:
        counts_match &= point.fed_with_cache == point.formula_with_cache
        if point.fed_without_cache is not None:
            counts_match &= point.fed_without_cache == point.formula_without_cache
    # a cached step after the prefill: the mean over all of them (sweep.py), not one noisy step
    if sweep.decode_s_per_token is None:
        cached_step_s = steps_with[0]
    else:
        cached_step_s = sweep.decode_s_per_token
    if fit.per_token_s > 0:
        fixed_in_tokens = fit.fixed_s_with_cache / fit.per_token_s
    else:
        fixed_in_tokens = None
    return vars(sweep) | {
        "counts_match": counts_match,
        "longest_point": longest,
        "first_step_without_cache_s": steps_without[0],
        "last_step_without_cache_s": steps_without[last_step],
        "partly_fitted": any(point.fed_without_cache is None for point in points),
        "interpolated": decide.interpolated(sweep),
        "fitted": any(point.without_cache_from == "fit" for point in points),
        "unfilled": any(point.without_cache_from == "none" for point in points),
        "single_run": "single_run" in sweep.doubts,
        "runs_spread": any(doubt in sweep.doubts for doubt in SWEEP_RUN_DOUBTS),
        "steps_spread": any(doubt in sweep.doubts for doubt in SWEEP_STEP_DOUBTS),
        "cached_step_s": cached_step_s,
        "cache_not_faster": "cache_not_faster" in sweep.doubts,  # decided in sweep.spread_doubts
        "fit_holds": fit.holds,
        "fixed_share_at_longest": None if at_longest is None else at_longest.fixed_share_with_cache,
        "fixed_in_tokens": fixed_in_tokens,  # the fixed cost of a cached step, in tokens' worth
        "extrapolated": None if furthest.measured else furthest,
        "rows": sweep_rows(sweep),
        "time_against_tokens": decide.time_against_tokens(sweep),
        "against_time": None,
        "longest_estimated": longest.without_cache_from != "clocked",
        "estimate": decide.longest_estimate(sweep),
    }


def sweep_glance(sweep: Sweep) -> Glance:
    """## 길이에 따른 비용's row: the ratios at the longest length; the lesson "time_below"
    (the time ratio's interval below the token ratio), "time_not_below", "undecided" (the runs
    cannot say), "unknown" (no time) or "not_faster" (the cache was not faster: nothing to learn
    from the times)."""
    facts = sweep_facts(sweep)
    found = decide.time_against_tokens(sweep)
    if facts["cache_not_faster"]:
        lesson = "not_faster"
    elif found is None:
        lesson = "unknown"
    else:
        lesson = {"below": "time_below", "not_below": "time_not_below"}.get(found, "undecided")
    return Glance(
        lesson=lesson, verdict=sweep.verdict, terms=("token_ratio", "speedup", "fit", "decode_step")
    )


LONGEST = "sweep.points[-1]"


RATIO = "{{ " + LONGEST + ".time_ratio_interval|x_in }}"


FIRST = "{{ sweep.uncached_first_interval|ms_in }}"


SHORT_OF_LEVEL = (  # why an interval decides nothing: its coverage, or where it lies
    "{% set ratio = " + LONGEST + ".time_ratio_interval %}{{ '구간이 토큰 비율에 걸친다'"
    " if ratio.decisive else '구간의 확률이 ' ~ (ratio.coverage * 100)|round|int ~ ' %로 수준 '"
    " ~ (ratio.level * 100)|round|int ~ ' %에 못 미친다' }}"
)


CACHED_STEP = (  # a cached step after the prefill: the mean over all of them, else the first
    "{{ (sweep.decode_s_per_token if sweep.decode_s_per_token is not none"
    " else sweep.steps.with_cache_s[0])|ms }}"
)


# the uncached steps clocked, as the record's steps say: the first in a row, and those spread out
CLOCKED = "{% set first, spread = sweep.clocked_counts() %}"


# The section's sentences (mminfer.records.sentences), asked for by sweep.md.j2; each predicate
# is sweep's decide.py's, from the runs in steps.*_runs_s.
ALONE_SENTENCES = (
    Sentence(
        "sweep.longest_estimate",
        holds=decide.longest_estimate,
        words=(
            "(캐시 없는 단계 {{ " + LONGEST + ".new_tokens }}개 중\n{{ sweep.steps.without_cache_s"
            "[:" + LONGEST + ".new_tokens]|reject('none')|list|length }}개만 재고 나머지를 채운"
            " 어림)"
        ),
        check=recomputed,
    ),
    # What ran: the method's sentences, each from the steps as clocked and checked on the runs
    Sentence(
        "sweep.clocking",
        holds=decide.uncached_clocking,
        words={
            "all": CLOCKED + "{{ first }}단계를 모두 한 토큰짜리 생성으로 쟀다",
            "spread": (
                CLOCKED + "처음 {{ first }}단계는 모두, 그 뒤로는 고르게 흩은 {{ spread }}단계만 한"
                " 토큰짜리 생성으로 쟀다"
            ),
            "first": CLOCKED + "처음 {{ first }}단계만 한 토큰짜리 생성으로 쟀다",
        },
        check=recomputed,
    ),
    Sentence(
        "sweep.filled",
        holds=decide.filled_by,
        words={
            "fit": "재지 않은 단계는 적합에서 채웠다.",
            "none": (
                "재지 않은 단계는 채우지 않았다(—): 적합이 맞지 않고, 보간할 고른 양옆 단계도 없다."
            ),
        },
        check=recomputed,
    ),
    Sentence(
        "sweep.interpolated",
        holds=decide.interpolated,
        words=(
            "적합이 단계 시간을 잘 설명하지 못해, 재지 않은 캐시 없는 단계는 양옆의 잰 단계를"
            " 직선으로 이어 채웠다(†). 양옆 단계가 모두 고른 곳(실행 간 구간이 중앙값의"
            " ±{{ sweep.step_noisy_cv|percent(0) }} 안)에서만 이었고, 실행이 흔들리거나 튄 단계를"
            " 건너 잇지는 않았다(—). 단계 시간이 길이에 따라 볼록하게 늘면 이 직선은 실제보다"
            " 조금 길게 잡는다."
        ),
        check=recomputed,
    ),
    Sentence(
        "sweep.last_clocked",
        holds=decide.stops_before_longest,
        words=(
            '캐시 없이 잰 마지막 단계는 i = {{ sweep.last_clocked_step()|particle("이다/다") }}:'
            " 그 뒤로 흩어 잴 단계를 두지 않았다(설정: `sweep.spread_steps`)."
        ),
        check=recomputed,
    ),
    Sentence(
        "sweep.runs_spread_over",
        holds=decide.runs_spread_over,
        words=(
            "생성 {{ sweep.runs }}회의 변동계수가 캐시 사용 {{ sweep.cv_with_cache|percent }},"
            " 미사용\n{{ sweep.cv_without_cache|percent }}로 {{ sweep.noisy_cv|percent(0) }}를"
            " 넘는 쪽이 있다."
        ),
        check=recomputed,
    ),
    Sentence(
        "sweep.steps_spread_over",
        holds=decide.steps_spread_over,
        words=(
            "한 생성 안의 단계 시간의 변동계수가 길이에 따른 증가를 빼고도 캐시 사용"
            "\n{{ sweep.cv_with_cache_within_runs|percent }}, 미사용"
            "\n{{ sweep.cv_without_cache_within_runs|percent }}로"
            " {{ sweep.step_noisy_cv|percent(0) }}를 넘는 쪽이\n있다."
        ),
        check=recomputed,
    ),
    Sentence(
        "sweep.two_bands",
        holds=decide.two_bands,
        words=(
            '{% from "macros.md.j2" import load_average %}'
            "{% set b = decide.sweep.cached_bands(sweep) %}"
            "캐시 경로의 디코드 한 단계는 두 무리로 갈렸다: 약 {{ b[0].median_s|ms }}(단계의"
            "\n{{ b[0].share|percent(0) }})와 약 {{ b[1].median_s|ms }}"
            "({{ b[1].share|percent(0) }};\n{{ load_average(sweep.load_before, sweep.load_after)"
            " }}). 평균 " + CACHED_STEP + "는 어느\n무리도 대표하지 않는다."
        ),
        check=recomputed,
    ),
    Sentence(
        "sweep.spreads_within",
        holds=decide.spreads_within,
        words=(
            "생성 {{ sweep.runs }}회의 변동계수가 캐시 사용 {{ sweep.cv_with_cache|percent }},"
            " 미사용 {{ sweep.cv_without_cache|percent }}로 {{ sweep.noisy_cv|percent(0) }}"
            " 이하이고, 한 생성 안의 단계의 변동계수(길이에 따른 증가를 뺀 것)가"
            " {{ sweep.cv_with_cache_within_runs|percent }},"
            " {{ sweep.cv_without_cache_within_runs|percent }}로"
            " {{ sweep.step_noisy_cv|percent(0) }} 이하다."
        ),
        check=recomputed,
    ),
    Sentence(
        "sweep.time_below_tokens",
        holds=decide.time_against_tokens,
        words={
            "below": "시간 비율(실행마다 짝지은 비율 " + RATIO + ")은 토큰 비율에 못 미친다",
            "not_below": "시간 비율(실행마다 짝지은 비율 " + RATIO + ")이 토큰 비율보다 크다",
            "undecided": (
                RUNS
                + "로는 시간 비율이 토큰 비율 {{ "
                + LONGEST
                + ".token_ratio|fmt('.1f') }}배보다"
                " 작은지 가를 수 없다(실행마다 짝지은 비율 " + RATIO + ": " + SHORT_OF_LEVEL + ")"
            ),
        },
        check=recomputed,
    ),
    Sentence(
        "sweep.fixed_share",
        holds=decide.fixed_share_of,
        words={
            "share": (
                "잰 캐시 경로 시간의 {{ sweep.longest_fixed_share()|percent_in }}가 적합의 단계당"
                " 절편(넣는 토큰과 무관한 단계 시간: 호출마다의 고정비와 가중치 읽기)이다"
            ),
            "exceeds": (
                "적합의 단계당 절편 × N이 잰 캐시 경로 시간의 가장 느린 실행보다도 커서 그 몫은"
                " 말할 수 없다: 이 적합은 캐시 경로의 절편을 넘게 잡는다"
            ),
        },
        check=recomputed,
    ),
    Sentence(
        "sweep.uncached_steps_grew",
        holds=decide.uncached_growth,
        words={
            "grew": (
                "캐시 없는 단계는 첫 단계 " + FIRST + "에서 마지막 잰 단계까지 실행마다"
                " {{ sweep.uncached_growth_interval|x_in }}로 늘었다."
            ),
            "not_grown": (
                "캐시 없는 단계는 첫 단계 " + FIRST + "에서 마지막 잰 단계까지 늘지 않았다(실행마다"
                " {{ sweep.uncached_growth_interval|x_in }}: 잡음이나 단계마다 같은 시간에 묻혔다)."
            ),
            "undecided": (
                RUNS + "로는 캐시 없는 단계가 첫 단계 " + FIRST + "에서 마지막 잰 단계까지 늘었는지"
                " 가를 수 없다(실행마다 {{ sweep.uncached_growth_interval|x_in }})."
            ),
        },
        check=recomputed,
    ),
    Sentence(
        "sweep.prefill",
        holds=decide.prefill_twice,
        words={
            "same": (
                "같은 P토큰의 `forward`인 캐시 없는 첫 단계 " + FIRST + "와 실행마다 짝지은 비율이"
                " 잡음 문턱(5 %) 안이다."
            ),
            "apart": (
                "같은 P토큰의 `forward`인 캐시 없는 첫 단계 " + FIRST + "와는 실행마다 짝지은"
                " 비율이 1에서 떨어진다: 같은 연산이라 차이는 방법이 아니라 이 실행의 흔들림이다"
                "{{ '(실행 중 기계가 바빴다)' if sweep.contention and sweep.contention.busy }}."
            ),
            "undecided": (
                "같은 P토큰의 `forward`인 캐시 없는 첫 단계 "
                + FIRST
                + "와 같은지 "
                + RUNS
                + "로는 가를 수 없다."
            ),
        },
        check=recomputed,
    ),
)


def sweep_time_facts(sweep: Sweep, time: Timing | None = None) -> dict:
    """sweep.json's facts (mminfer.measures.sweep.sweep.sweep_facts) and, with time.json, how
    the speedup at time.json's length relates to the sweep's time ratio (:func:`against_time`,
    the sentence sweep.against_time's variant)."""
    return sweep_facts(sweep) | {"against_time": against_time(sweep, time)}


def point_of(sweep: Sweep, time: Timing | None) -> SweepPoint | None:
    """The sweep's length that is time.json's, after the same prompt, with a time ratio."""
    if time is None or time.prompt_len != sweep.prompt_len:
        return None
    point = None
    for candidate in sweep.points:
        if candidate.new_tokens == time.new_tokens and candidate.time_ratio is not None:
            point = candidate
    return point


def against_time(sweep: Sweep, time: Timing | None) -> str | None:
    """time.json's speedup beside the time ratio this sweep gives at the same prompt and length
    (mminfer.records.reconcile): "overlap", "apart" (which is which and why: the contention
    each job measured, the threads, the methods), "undecided" (an interval short of its level);
    "estimate" where some of the sweep's uncached steps at that length were filled in (fit,
    interpolation), never judged against the speedup. None: no length of this sweep is
    time.json's."""
    point = point_of(sweep, time)
    if point is None:
        return None
    if clocked_among_first(sweep, point.new_tokens) < point.new_tokens:
        return "estimate"
    return reconcile(time.speedup_interval, point.time_ratio_interval)


def prefill_against_latency(sweep: Sweep, latency: Latency | None) -> str | None:
    """sweep.prefill_against_latency: sweep.json's time to first token (the cached generation's
    first forward) beside latency.json's (the streamer's first token of time.json's cached runs),
    the same P tokens prefilled (mminfer.records.reconcile); None where not the same prompt."""
    if latency is None or latency.prompt_len != sweep.prompt_len:
        return None
    runs = [run.ttft_s for run in latency.with_cache.runs]
    return reconcile(median_interval(runs), sweep.ttft_interval)


ONLY_SWEEP = "이 절을 잴 때만 기계가 바빴고, "


# The load named as a cause of two timings' difference only where one side alone ran busy
# (issue 58: a cause where both sides ran under the same contention is no cause of a difference).
SWEEP_LOAD_SENTENCES = (
    Sentence(
        "sweep.load_against_time",
        holds=lambda time, sweep: busy_alone(time, sweep, ("time", "sweep")),
        words={"time": "time.json을 잴 때만 기계가 바빴고, ", "sweep": ONLY_SWEEP},
        check=recomputed,
    ),
    Sentence(
        "sweep.load_against_latency",
        holds=lambda latency, sweep: busy_alone(latency, sweep, ("latency", "sweep")),
        words={"latency": "time.json의 실행을 잴 때만 기계가 바빴고, ", "sweep": ONLY_SWEEP},
        check=recomputed,
    ),
)


SWEEP_POINT = (
    "{% set point = sweep.point_at(time.new_tokens) %}N = {{ point.new_tokens }}의 시간 비율"
)


# time.json's paired statistic (the median of the rounds' ratios), beside the sweep's paired ratio
# it is compared with: named as what it is, with the speedup (the ratio of the medians) it is not
SPEEDUP = (
    "`## KV 캐시`의 라운드마다 짝지은 시간 비 {{ time.speedup_interval|x_in }}(그 speedup"
    ' {{ time.speedup|figure("time.speedup") }}배는 중앙값끼리의 비)'
)


SWEEP_TTFT = "이 절의 첫 토큰까지 시간 {{ sweep.ttft_interval|ms_in }}"


LATENCY_TTFT = (
    "{% set ttfts = latency.with_cache.runs|map(attribute='ttft_s')|list %}latency.json의"
    " TTFT(캐시 사용, 실행 {{ ttfts|length }}회 중앙값 {{ latency.with_cache.ttft_s|ms }},"
    " 범위 {{ ttfts|min|ms }}–{{ ttfts|max|ms }})"
)


SWEEP_SCALE_SENTENCES = (
    Sentence(
        "sweep.against_time",
        holds=against_time,
        words={
            "overlap": (
                SWEEP_POINT + " {{ point.time_ratio_interval|x_in }}는 " + SPEEDUP + "와 구간이"
                " 겹친다(겹친다고 같은 것은 아니다)."
            ),
            "apart": (
                SWEEP_POINT + " {{ point.time_ratio_interval|x_in }}는 " + SPEEDUP + "와 구간이"
                " 겹치지 않는다: {{ say('sweep.load_against_time') }}"
                "{{ '스레드도 %d개 대 %d개이며, '"
                "|format(time.threads, sweep.threads) if time.threads != sweep.threads }}방법이"
                " 다르다(time.json은 생성 전체를 한 번에, 이 절은 단계마다 잰 시간의 합)."
            ),
            "undecided": (
                SWEEP_POINT + " {{ point.time_ratio_interval|x_in }}와 " + SPEEDUP + "는 구간이"
                " 수준에 못 미쳐(실행이 적다) 같은지 다른지 말하지 않는다."
            ),
            "estimate": (
                SWEEP_POINT + " ≈{{ point.time_ratio|fmt('.2f') }}배는 캐시 없는 단계 일부를 채운"
                " 어림이라 `## KV 캐시`의 시간 비와 견주지 않는다."
            ),
        },
        check=recomputed,
    ),
    Sentence(
        "sweep.prefill_against_latency",
        holds=prefill_against_latency,
        words={
            "overlap": SWEEP_TTFT + "와 " + LATENCY_TTFT + "는 구간이 겹친다.",
            "apart": (
                SWEEP_TTFT + "와 " + LATENCY_TTFT + "는 같은 P토큰의 프리필인데 구간이 겹치지"
                " 않는다: {{ say('sweep.load_against_latency') }}방법이 다르다(latency.json은"
                " 스트리머가 첫"
                " 토큰을 받기까지의 `generate`, 이 절은 직접 돈 그리디 루프의 첫 `forward`)."
            ),
            "undecided": (
                SWEEP_TTFT + "와 " + LATENCY_TTFT + "는 실행이 적어 구간이 수준에 못 미친다: 같은지"
                " 다른지 말하지 않는다."
            ),
        },
        check=recomputed,
    ),
)

# The section's sentences (mminfer.records.sentences), collected by render.sentence_table.
SENTENCES = (*ALONE_SENTENCES, *SWEEP_LOAD_SENTENCES, *SWEEP_SCALE_SENTENCES)
