"""## 서빙: serve.json's facts, glance row and sentences, and its joins with sweep.json."""

from __future__ import annotations

from mminfer.measures.serve import decide
from mminfer.measures.serve.serve import Serve, cliff_about
from mminfer.measures.sweep.sweep import Sweep
from mminfer.records import Glance
from mminfer.records.reconcile import reconcile
from mminfer.records.sentences import Sentence, recomputed
from mminfer.report.busy import busy_alone

PASSES = "패스 {{ serve.passes }}회"

SPREADS = {  # serve.<key>: the doubt naming its batches, what spread, its threshold
    "decode_spread_over": ("decode_spread", "패스 사이 디코드 한 단계", "noisy_cv"),
    "prefill_spread_over": ("prefill_spread", "패스 사이 프리필", "noisy_cv"),
    "within_spread_over": ("decode_spread_within_passes", "한 패스 안의 단계들", "step_noisy_cv"),
}


def spread_sentence(key: str) -> Sentence:
    """serve.<key>: the batches whose recorded spread passed its threshold, named."""
    doubt, what, threshold = SPREADS[key]

    def holds(serve: Serve) -> bool:
        return decide.spread_named(serve, doubt)

    return Sentence(
        "serve." + key,
        holds=holds,
        words=(
            "B = {{ decide.serve.spread_over(serve, '"
            + doubt
            + "')|join(', ') }}에서 "
            + what
            + "의"
            " 변동계수가\n{{ serve." + threshold + "|percent(0) }}를 넘었다."
        ),
        check=recomputed,
    )


def not_together(seen: str, tests: str) -> str:
    """An "uncorrected" variant's words: ``seen`` decided one test at a time, not together."""
    return (
        seen
        + "은 하나씩 따로 가를 때만 보인다("
        + PASSES
        + "로는 "
        + tests
        + "를 함께 가르지 못한다)."
    )


SPREAD_DOUBTS = ("decode_spread", "prefill_spread")  # between the passes


def serve_facts(serve: Serve) -> dict:
    """serve.json: how far to trust the table, where tokens per second peak and stop growing,
    whether batching is nearly free or only still pays, the cliffs, which bound binds and why,
    and the batches whose decode steps fall in two bands. Its prefill beside sweep.json's is the
    report's join (this module's join): ``prefill_against_sweep`` None here."""
    rows = serve.batches
    users = serve.users
    by_batch = {row.batch: row for row in rows}
    first = rows[0]
    top = by_batch[serve.peak_batch]
    lower_bound = users.speed_how == "lower bound"
    experts = [row.experts_touched for row in rows if row.experts_touched is not None]
    spread_batches = []
    within_batches = []
    contradicting_batches = []
    for row in rows:
        if any(doubt in SPREAD_DOUBTS for doubt in row.doubts):
            spread_batches.append(row.batch)
        if "decode_spread_within_passes" in row.doubts:
            within_batches.append(row.batch)
        if row.verdict == "untrusted":
            contradicting_batches.append(row.batch)
    fit = serve.fit
    return vars(serve) | {
        "kv_match": all(row.kv_bytes_match for row in rows),
        "first": first,
        "last": rows[-1],
        "binding": users.binding,
        "speed_lower_bound": lower_bound,
        "memory_known": users.users_by_memory is not None,
        "experts": experts if experts else None,
        "experts_grow": bool(experts) and experts[-1] > experts[0],
        "free_below_last": serve.nearly_free_up_to < rows[-1].batch,
        "context_cut": serve.context_asked > users.context,
        "context_beyond_measured": users.context > serve.decode_context,
        # a fixed cost of 0 gives no crossover worth naming
        "crossover_known": bool(serve.fit.crossover_batch),
        "spread_batches": spread_batches,  # the passes' medians spread over noisy_cv
        "within_batches": within_batches,  # the steps inside the passes spread over noisy_cv
        "largest_cv_within": max(row.cv_within_passes for row in rows),
        "contradicting_batches": contradicting_batches,  # faster than a smaller batch
        "largest_cv": max(row.cv_decode_step for row in rows),
        "nearly_free_region": serve.nearly_free_up_to > first.batch,
        "nearly_free_row": by_batch[serve.nearly_free_up_to],
        "peak": top,
        "peak_is_first": top.batch == first.batch,
        # batching pays past where it is nearly free: tokens per second grow up to the peak
        "still_pays": top.batch > serve.nearly_free_up_to and top.batch != first.batch,
        "single_pass": "single_pass" in serve.doubts,
        "fit_too_few": len(rows) < fit.least_batches,
        "cliff_rows": [(by_batch[c.from_batch], by_batch[c.to_batch], c) for c in serve.cliffs],
        "caches_known": bool(serve.caches),
        "prefill_against_sweep": None,
        "decided_cliffs": decide.decided_cliffs(serve),  # serve.cliffs's: the passes decide them
        "alone_cliffs": decide.decided_cliffs(
            serve, holm=False
        ),  # each decided alone, not together
        "speed_bound": decide.speed_bound_of(
            serve
        ),  # serve.speed_bound's variant: "≈" where not firm
    }


def serve_glance(serve: Serve) -> Glance:
    """## 서빙's row: the peak throughput; the lesson is which bound binds ("speed", "memory",
    "not reached")."""
    lessons = {"memory": "memory", "speed": "speed", "none": "not reached"}
    return Glance(
        lesson=lessons.get(decide.bound_of(serve), "undecided"),
        verdict=serve.verdict,
        terms=("prefill", "batch", "user", "throughput", "cliff", "bound"),
    )


GAIN = "{{ serve.peak_gain_interval()|x_in }}"


PER_USER = "{{ serve.per_user_interval()|x_in }}"


TARGET = (
    "목표 {{ serve.users.tokens_per_second|fmt('g') }} 토큰/초(한 단계"
    " {{ serve.users.step_target_s|ms }})"
)


SPEEDS = (
    "사용자 한 명의 속도는 {{ serve.batches[0].per_user_tokens_per_second|fmt(',.1f') }}에서"
    " {{ serve.row(serve.peak_batch).per_user_tokens_per_second|fmt(',.1f') }} 토큰/초로"
)


NOT_GROWN = (
    "{% for before, after, found in decide.serve.growth_steps(serve, holm=True)"
    " if found != 'grew' %}"
    "{{ before }} → {{ after }}{{ ', ' if not loop.last }}{% endfor %}"
)


STOPS = "{% set stops = serve.row(decide.serve.growth_stops_from(serve)) %}"


FIRST_EXPERTS = "{{ serve.batches[0].experts_touched|fmt('.2f') }}개"


STEPS = "{{ serve.batches|length - 1 }}단계"


# The section's sentences (mminfer.records.sentences), asked for by serve.md.j2; each predicate
# is serve's decide.py's, from the passes (paired by pass).
ALONE_SENTENCES = (
    Sentence(
        "serve.cliff_cache",
        holds=decide.cliff_cache,
        words='장치 캐시를 넘음(추정): {{ cliff.crossed|map(attribute="name")|join(", ") }}',
        given=("cliff",),
        about=cliff_about,
    ),
    *(spread_sentence(key) for key in SPREADS),
    Sentence(
        "serve.two_bands",
        holds=decide.two_bands,
        words=(
            '{% from "macros.md.j2" import load_average %}디코드 한 단계(모든 패스의 단계)가 두'
            " 무리로 갈린 배치가\n있다({{ load_average(serve.load_before, serve.load_after) }}):"
            "\n{% for item in decide.serve.banded(serve) %}{% set fast, slow = item.bands %}"
            "B = {{ item.batch|particle('은/는') }} 약 {{ fast.median_s|ms }}(단계의"
            " {{ fast.share|percent(0) }})와 약\n{{ slow.median_s|ms }}"
            "({{ slow.share|percent(0) }}){{ ',' if not loop.last else '.' }}\n{% endfor %}"
            "그 배치의 중앙값은 어느 무리도 대표하지 않는다."
        ),
        check=recomputed,
    ),
    Sentence(
        "serve.experts",
        holds=decide.experts_of,
        words={
            "grow": (
                "MoE 모델이라 B가 늘면 한 단계가 쓰는 전문가도 늘어난다(층마다 평균\n"
                + FIRST_EXPERTS
                + " → {{ serve.batches[-1].experts_touched|fmt('.2f') }}개)."
            ),
            "same": (
                "MoE 모델이지만 B가 늘어도 한 단계가 쓰는 전문가는 층마다 평균\n"
                + FIRST_EXPERTS
                + " 그대로였다."
            ),
        },
        check=recomputed,
    ),
    Sentence(
        "serve.context_beyond_measured",
        holds=decide.context_beyond_measured,
        words=(
            "이 한계는 사용자마다 캐시가 {{ serve.decode_context|thousands }}토큰일 때 잰 것이다:"
            " 컨텍스트\n{{ serve.users.context|thousands }}토큰에서는 어텐션이 길어 한 단계가 더"
            " 걸리므로 이보다 작을 수 있다."
        ),
    ),
    Sentence(
        "serve.peak_at",
        holds=decide.peak_of,
        words={
            "at": (
                "초당 토큰의 중앙값은 B = {{ serve.peak_batch }}에서"
                " {{ serve.peak_tokens_per_second|fmt(',.0f') }}로 가장 많았고, 패스마다 짝지으면"
                " B = {{ serve.batches[0].batch }}의 " + GAIN + "다."
            ),
            "first": (
                "초당 토큰은 가장 작은 배치 B = {{ serve.batches[0].batch }}에서 가장"
                " 많았다({{ serve.peak_tokens_per_second|fmt(',.0f') }}): 이 기계에서는 배치를"
                " 키워도 처리량이 늘지 않았다(패스마다 짝지어 어느 배치도 더 많지 않다)."
            ),
            "undecided": (
                PASSES + "로는 배치를 키워 초당 토큰이 늘었는지 가를 수 없다: 중앙값이 가장 많은"
                " B = {{ serve.peak_batch }}도 패스마다 짝지으면 B = {{ serve.batches[0].batch }}의"
                " " + GAIN + "다."
            ),
        },
        check=recomputed,
    ),
    Sentence(
        "serve.dips",
        holds=decide.dips_named,
        words={
            "named": (
                "그 사이 B = {{ decide.serve.dips(serve)|join(', ') }}에서는 초당 토큰이 바로 앞"
                " 배치보다 줄었다(패스마다 짝지은 비율이 1 아래)."
            ),
            "uncorrected": not_together("그 사이 초당 토큰이 바로 앞 배치보다 줄어든 곳", STEPS),
        },
        check=recomputed,
    ),
    Sentence(
        "serve.per_user_falls",
        holds=decide.per_user_of,
        words={
            "falls": (SPEEDS + " 줄었다(한 단계가 패스마다 " + PER_USER + ")."),
            "rises": (SPEEDS + " 늘었다(한 단계가 패스마다 " + PER_USER + ")."),
            "same": (
                "사용자 한 명의 속도는 정점에서도 잡음 문턱(5 %) 안에서 같았다(한 단계가 패스마다 "
                + PER_USER
                + ")."
            ),
            "undecided": (
                PASSES + "로는 정점에서 사용자 한 명의 속도가 줄었는지 가를 수 없다(한 단계가"
                " 패스마다 " + PER_USER + ")."
            ),
        },
        check=recomputed,
    ),
    Sentence(
        "serve.bound",
        holds=decide.bound_of,
        words={
            "memory": (
                "사용자 수는 **메모리가 먼저 묶는다**:"
                " {{ serve.users.users_by_memory|thousands }}명."
            ),
            "speed": (
                "사용자 수는 **속도가 먼저 묶는다**: " + TARGET + "에서"
                " {{ serve.users.users_by_speed|thousands }}명."
            ),
            "none": (
                "잰 가장 큰 배치({{ serve.users.users_by_speed }}명)까지 모든 패스가 속도 목표"
                " 안이었다: 어느 한계에도 닿지 않았다."
            ),
            "undecided": (
                PASSES + "로는 어느 배치가 " + TARGET + "를 넘는지 가를 수 없어, 어느 한계가"
                " 먼저인지 말하지 않는다."
            ),
        },
        check=recomputed,
    ),
    Sentence(
        "serve.speed_bound",
        holds=decide.speed_bound_of,
        words={
            "firm": (
                "B = {{ serve.users.speed_between[0] }}의 한 단계"
                " {{ serve.row(serve.users.speed_between[0]).decode_step_interval|ms_in }}는 목표"
                " 안, B = {{ serve.users.speed_between[1] }}의"
                " {{ serve.row(serve.users.speed_between[1]).decode_step_interval|ms_in }}는 목표"
                " 밖이다."
            ),
            "fit": (
                "이 수는 어림이다: 잰 B = {{ serve.users.speed_between[0] }}와"
                " {{ serve.users.speed_between[1] }} 사이를 적합으로 읽은 값이다."
            ),
            "straddles": (
                "이 수는 어림이다: B = {{ serve.users.speed_between[0] }}와"
                " {{ serve.users.speed_between[1] }}의 한 단계 구간"
                " ({{ serve.row(serve.users.speed_between[0]).decode_step_interval|ms_in }},"
                " {{ serve.row(serve.users.speed_between[1]).decode_step_interval|ms_in }}) 중"
                " 목표에 걸치는 것이 있다."
            ),
        },
        check=recomputed,
    ),
    Sentence(
        "serve.larger_faster",
        holds=decide.larger_faster,
        words={
            "named": (
                "B = {{ decide.serve.faster_batches(serve)|join(', ') }}에서는 더 큰 배치가 바로"
                " 작은 배치보다 패스마다 짝지어 더 빨랐다: 더 많은 일을 더 빨리 할 수는 없으니"
                " 측정 문제다."
            ),
            "uncorrected": not_together(
                "더 큰 배치가 바로 작은 배치보다 더 빠른 곳",
                "{{ decide.serve.faster_tests(serve)|length }}번의 비교",
            ),
        },
        check=recomputed,
    ),
    Sentence(
        "serve.cliffs",
        holds=decide.cliffs_named,
        words={
            "named": (
                "{% for cliff in decide.serve.decided_cliffs(serve) %}B = {{ cliff.from_batch }} →"
                " {{ cliff.to_batch }}에서 한 단계가 패스마다"
                " {{ serve.cliff_interval(cliff)|x_in }} 길어져 배치 배율"
                " {{ cliff.batch_ratio|fmt('g') }}배보다 컸다{{ '; ' if not loop.last }}"
                "{% endfor %}(절벽)."
            ),
            "uncorrected": not_together("한 단계가 배치 배율보다 더 길어진 곳(절벽)", STEPS),
        },
        check=recomputed,
    ),
    Sentence(
        "serve.fit_within",
        holds=decide.fit_within,
        words=(
            "B {{ serve.fit.fitted_batches[0] }}–{{ serve.fit.fitted_batches[1] }}에서 패스의"
            " 구간째로 상대 오차가 모두 {{ serve.fit.holds_within|percent(0) }} 안, 중앙값"
            " {{ serve.fit.median_relative_residual|percent }}"
        ),
        check=recomputed,
    ),
    # a list of cases decided against the fit's own tolerance, never "every batch past the range"
    Sentence(
        "serve.off_the_line",
        holds=decide.off_the_line_named,
        words=(
            'B = {{ decide.serve.off_the_line(serve)|join(", ") }}에서는 패스의 구간째로 이'
            " 직선에서 {{ serve.fit.holds_within|percent(0) }} 넘게 벗어난다"
        ),
        check=recomputed,
    ),
    Sentence(
        "serve.growth",
        holds=decide.growth_of,
        words={
            "every": (
                "잰 가장 큰 배치 B = {{ serve.batches[-1].batch }}까지 배치를 두 배로 할 때마다"
                " 초당 토큰이 {{ serve.growth_per_doubling|percent(0) }} 넘게 늘었다(패스마다"
                " 짝지은 비율로)."
            ),
            "stops": (
                STOPS + "B = {{ stops.batch }}부터는 배치를 두 배로 해도 초당 토큰이"
                " {{ serve.growth_per_doubling|percent(0) }} 넘게 늘지 않는다(패스마다 짝지은"
                " 비율로; 그때 한 단계 {{ stops.decode_step_interval|ms_in }})."
            ),
            "mixed": (
                "배치를 두 배로 할 때 초당 토큰이 {{ serve.growth_per_doubling|percent(0) }} 넘게"
                " 는 곳도 있었지만, B = " + NOT_GROWN + "에서는 그만큼 늘지 않았다."
            ),
            "undecided": (
                PASSES + "로는 배치를 두 배로 할 때마다 초당 토큰이"
                " {{ serve.growth_per_doubling|percent(0) }} 넘게 느는지 모두 가를 수는 없다"
                "(가를 수 없는 곳: B = {% for before, after, found in"
                " decide.serve.growth_steps(serve) if found == 'undecided' %}"
                "{{ before }} → {{ after }}{{ ', ' if not loop.last }}"
                "{% endfor %})."
            ),
            "uncorrected": (
                PASSES + "로는 배치를 두 배로 할 때 초당 토큰이"
                " {{ serve.growth_per_doubling|percent(0) }} 넘게 늘었는지 단계마다는 갈리지만,"
                " {{ serve.batches|length - 1 }}단계를 함께 말하기에는 모자란다(단계 수로 보정한"
                " 수준에 못 미친다)."
            ),
        },
        check=recomputed,
    ),
    Sentence(
        "serve.nearly_free",
        holds=decide.nearly_free_of,
        words={
            "up_to": (
                "배치를 한 단계씩 키울 때 한 단계가 {{ serve.nearly_free|percent(0) }} 넘게"
                " 길어지지 않은 것은(패스마다 짝지은 비율로)"
                " B = {{ decide.serve.free_up_to(serve) }}까지다"
                "(한 단계 {{ serve.batches[0].decode_step_interval|ms_in }} →"
                " {{ serve.row(decide.serve.free_up_to(serve)).decode_step_interval|ms_in }})"
                "{{ ': 거기까지는 B와 무관한 몫(호출마다의 고정비와 가중치 읽기)이 지배해"
                " 사용자를 더 받는 것이 거의 공짜다.'"
                " if decide.serve.free_up_to(serve) < serve.batches[-1].batch"
                " else ': 잰 가장 큰 배치까지 거의 공짜였다.' }}"
            ),
            "not_free": (
                "배치를 처음 키울 때부터 한 단계가 {{ serve.nearly_free|percent(0) }} 넘게"
                " 길어졌다(패스마다 짝지은 비율로)."
            ),
            "undecided": (
                PASSES + "로는 배치를 처음 키울 때 한 단계가 {{ serve.nearly_free|percent(0) }}"
                " 넘게 길어지는지 가를 수 없다."
            ),
        },
        check=recomputed,
    ),
)


def serve_sweep_facts(serve: Serve, sweep: Sweep | None = None) -> dict:
    """serve.json's facts (mminfer.measures.serve.serve.serve_facts) and its B = 1 prefill
    beside sweep.json's time to first token (:func:`prefill_against_sweep`)."""
    return serve_facts(serve) | {"prefill_against_sweep": prefill_against_sweep(serve, sweep)}


def prefill_against_sweep(serve: Serve, sweep: Sweep | None) -> str | None:
    """Serve's B = 1 prefill beside sweep.json's time to first token, the same forward of the
    same prompt timed by two jobs (mminfer.records.reconcile): "overlap", "apart" or
    "undecided". None where the two did not measure the same prefill."""
    first = serve.batches[0]
    if sweep is None or first.batch != 1 or first.prefill_interval is None:
        return None
    if sweep.prompt_len != serve.prompt_len:
        return None
    return reconcile(first.prefill_interval, sweep.ttft_interval)


SERVE_LOAD_SENTENCES = (
    Sentence(
        "serve.load_against_sweep",
        holds=lambda serve, sweep: busy_alone(serve, sweep, ("serve", "sweep")),
        words={
            "serve": "서빙을 잴 때만 기계가 바빴고, ",
            "sweep": "`## 길이에 따른 비용`을 잴 때만 기계가 바빴고, ",
        },
        check=recomputed,
    ),
)


SERVE_PREFILL = "B = 1의 프리필 {{ serve.batches[0].prefill_interval|ms_in }}"


SERVE_SCALE_SENTENCES = (
    Sentence(
        "serve.prefill_against_sweep",
        holds=prefill_against_sweep,
        words={
            "overlap": (
                SERVE_PREFILL + "는 `## 길이에 따른 비용`의 첫 토큰까지 시간"
                " {{ sweep.ttft_interval|ms_in }}와 같은 프롬프트의 같은 `forward`이고, 두 구간이"
                " 겹친다."
            ),
            "apart": (
                SERVE_PREFILL + "는 `## 길이에 따른 비용`의 첫 토큰까지 시간"
                " {{ sweep.ttft_interval|ms_in }}와 같은 프롬프트의 같은 `forward`인데 구간이"
                " 겹치지 않는다: {{ say('serve.load_against_sweep') }}방법이 다르다(여기는 모델의"
                " `generate`가 B행을 한 번에, 저기는 직접 돈 그리디 루프의 첫 단계)."
            ),
            "undecided": (
                SERVE_PREFILL + "와 `## 길이에 따른 비용`의 첫 토큰까지 시간"
                " {{ sweep.ttft_interval|ms_in }}는 실행이 적어 구간이 수준에 못 미친다: 같은지"
                " 다른지 말하지 않는다."
            ),
        },
        check=recomputed,
    ),
)

# The section's sentences (mminfer.records.sentences), collected by render.sentence_table.
SENTENCES = (*ALONE_SENTENCES, *SERVE_LOAD_SENTENCES, *SERVE_SCALE_SENTENCES)
