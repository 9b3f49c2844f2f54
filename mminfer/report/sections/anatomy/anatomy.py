"""## 한 단계의 해부: anatomy.json's facts, glance row and sentences, and its joins.

anatomy.json's counts and probes split against time.json's medians (which term binds each path,
each term's share) and the sweep's fitted intercept against time.json's fixed cost per step.
"""

from __future__ import annotations

from mminfer.measures.anatomy import decide
from mminfer.measures.anatomy.anatomy import PATHS, PROBES, TERMS, Anatomy, PathSplit, path_splits
from mminfer.measures.sweep.sweep import Sweep
from mminfer.measures.time.time import Timing
from mminfer.records import Glance, rates
from mminfer.records.interval import Interval, look_level, median_interval
from mminfer.records.sentences import Sentence, recomputed


def profile_words(path: str) -> str:
    """anatomy.profile_<path>'s words: the wall, the three largest parts, the rest's share."""
    p = f'anatomy.profile["{path}"]'
    label = {"with_cache": "캐시 사용", "without_cache": "캐시 미사용"}[path]
    return (
        f"{label} 경로는 프로파일러 아래 {{{{ {p}.wall_interval|ms_in }}}} 걸렸고 그중"
        f" 큰 부분은 중앙값으로 {{% for name, part in {p}.largest_named() %}}{{{{ name }}}}"
        f' {{{{ part|ms_in }}}}{{{{ ", " if not loop.last }}}}{{% endfor %}},'
        f" 나머지(op 사이의 Python과 프레임워크)가 {{{{ {p}.rest_share()|percent_in }}}}다."
    )


def anatomy_facts(anatomy: Anatomy) -> dict:
    """The counts and the machine; time.json's split of both paths is the report's join
    (this module's join), absent here: ``comparable`` "absent", no ``split``."""
    machine = anatomy.machine
    return vars(anatomy) | {
        # "op 하나 {op_s}, 행렬곱 {matmul_gflop_per_s} GFLOP/s, 복사 대역폭 ... {gb_per_s} GB/s"
        "op_s": rates.seconds_for(1, machine.op.per_s),
        "matmul_gflop_per_s": rates.gflop_per_s(machine.matmul.per_s),
        "bandwidth_gb_per_s": [rates.gb_per_s(probe.speed.per_s) for probe in machine.bandwidth],
        "comparable": "absent",
        "counter_gap": bool(anatomy.uncounted_ops),
        "time_verdict": None,
        "split": None,
    }


ALONE_SENTENCES = (
    *(
        Sentence(
            f"anatomy.profile_{path}",
            holds=decide.profiled(path),
            words=profile_words(path),
            check=recomputed,
        )
        for path in PATHS
    ),
    Sentence(
        "anatomy.fewer_flops_same_calls",
        holds=decide.fewer_flops_same_calls,
        words=(
            "P = {{ anatomy.prompt_len }}, N = {{ anatomy.new_tokens }}에서 캐시는 FLOPs를"
            " {{ (anatomy.without_cache.totals.flops_formula"
            ' / anatomy.with_cache.totals.flops_formula)|fmt(".1f") }}배 줄이지만 forward 호출은'
            " {{ anatomy.with_cache.totals.calls }}회 그대로다."
        ),
        check=recomputed,
    ),
    Sentence(
        "anatomy.formula_equals_counter",
        holds=decide.formula_equals_counter,
        words="카운터가 보는 op에서는 공식과 카운터가 호출마다 같다.",
    ),
    Sentence(
        "anatomy.probes",
        holds=decide.probes_doubt,
        words={
            "unreliable": (
                '**기계 측정을 믿을 수 없다**: {{ anatomy.unreliable_probes()|join(", ") }}의'
                " 실행이 두 무리로 갈렸다(정렬한 실행의 가장 넓은 틈 양쪽의 중앙값이 2배 넘게"
                " 다르다). 그 측정에 기댄 항으로는 가장 큰 항도, 잰 시간에 대한 몫도 말하지 않는다."
            ),
            "spread": (
                '**기계 측정이 흔들렸다**: {{ anatomy.noisy_probes()|join(", ") }}의 변동계수가'
                " {{ " + PROBES + ".noisy_cv|percent(0) }}를 넘는다. 그 항은 어림이다."
            ),
        },
        check=recomputed,
    ),
    Sentence(
        "anatomy.probes_busy",
        holds=decide.probes_busy,
        words=(
            "**기계 측정은 바쁜 기계에서 돌았다**(CPU 몫"
            " {{ anatomy.contention.cpu_share|percent(0) }}, CPU 대기"
            " {{ anatomy.contention.cpu_pressure|percent(0) }}): 다른 일이 코어를 나눠 썼다면"
            " 프로브는 이 기계의 한계를 낮게 잡는다."
        ),
    ),
)


def comparable(anatomy: Anatomy, time: Timing | None) -> str:
    """Whether time.json can be split by anatomy.json: "yes", or why not ("absent",
    "untrusted", "other_length": another P or N, "other_model", "other_threads")."""
    if time is None:
        return "absent"
    if time.verdict == "untrusted":
        return "untrusted"
    if (time.prompt_len, time.new_tokens) != (anatomy.prompt_len, anatomy.new_tokens):
        return "other_length"
    if time.run.sha256 != anatomy.run.sha256 or time.run.backend != anatomy.run.backend:
        return "other_model"
    if time.threads != anatomy.threads or time.run.device != anatomy.run.device:
        return "other_threads"
    return "yes"


def anatomy_time_facts(anatomy: Anatomy, time: Timing | None = None) -> dict:
    """The counts and the machine (mminfer.measures.anatomy.anatomy.anatomy_facts), and where
    time.json is :func:`comparable` the split of both paths against its intervals."""
    joined = comparable(anatomy, time)
    facts = anatomy_facts(anatomy) | {
        "comparable": joined,
        "time_verdict": None if time is None else time.verdict,
        # the fixed cost per step, time.json's one figure (its narrow side)
        "fixed_step": None if time is None else fixed_step(time),
    }
    if joined == "yes":
        facts["split"] = path_splits(anatomy, measured_intervals(time))
    return facts


def measured_intervals(time: Timing) -> dict[str, Interval]:
    """time.json's interval of each path, by path."""
    return {"with_cache": time.with_cache_interval, "without_cache": time.without_cache_interval}


def anatomy_time_glance(anatomy: Anatomy, time: Timing | None = None) -> Glance:
    """The row: the term that binds the cached path, where time.json is comparable."""
    if comparable(anatomy, time) != "yes":
        return Glance(lesson="counts_only", terms=("dispatch", "roofline", "fixed_cost"))
    return Glance(
        lesson="split", verdict=time.verdict, terms=("dispatch", "roofline", "fixed_cost")
    )


def split_of(anatomy: Anatomy, time: Timing | None, path: str) -> PathSplit | None:
    """Path ``path`` split against time.json's interval; None where time.json is not
    :func:`comparable`."""
    if comparable(anatomy, time) != "yes":
        return None
    return anatomy.split(path, measured_intervals(time)[path])


def binding_of(path: str):
    """anatomy.binds_<path>: the term the intervals decide binds (PathSplit.binding)."""

    def binding(anatomy: Anatomy, time: Timing | None) -> str | None:
        split = split_of(anatomy, time, path)
        return None if split is None else decide.binding(split)

    return binding


def fit_of(path: str):
    """anatomy.fit_<path>: where the model lies against the measured time (PathSplit.fit); a
    model short of it on a busy machine names the load first ("under_busy_time": time.json's
    runs busy, "under_busy_probes": the probes')."""

    def fit(anatomy: Anatomy, time: Timing | None) -> str | None:
        split = split_of(anatomy, time, path)
        if split is None:
            return None
        found = decide.fit(split)
        if found == "under" and time.contention is not None and time.contention.busy:
            return "under_busy_time"
        if found == "under" and anatomy.contention is not None and anatomy.contention.busy:
            return "under_busy_probes"
        return found

    return fit


def share_of(path: str, term: str):
    """anatomy.<term>_share_<path>: a term's share of the measured time (PathSplit.share_of)."""

    def share(anatomy: Anatomy, time: Timing | None) -> str | None:
        split = split_of(anatomy, time, path)
        return None if split is None else decide.share_of(split, term)

    return share


def glance_binding(anatomy: Anatomy, time: Timing | None) -> str | None:
    """anatomy.glance: both paths' binding terms, "<with_cache>/<without_cache>"."""
    found = [binding_of(path)(anatomy, time) for path in PATHS]
    return None if None in found else "/".join(found)


TERM_WORDS = {"dispatch": "디스패치", "arithmetic": "연산", "memory": "메모리"}


BINDING_WORDS = TERM_WORDS | {"undecided": "가를 수 없음", "unreliable": "믿을 수 없는 측정"}


PATH_WORDS = {"with_cache": "캐시 경로", "without_cache": "캐시 없는 경로"}


def split_words(path: str) -> str:
    """The Jinja that sets ``split``, path ``path``'s PathSplit, from the records."""
    return '{% set split = anatomy.split("' + path + '", time.' + path + "_interval) %}"


def fit_words(path: str) -> dict[str, str]:
    """anatomy.fit_<path>'s words, one per variant (the model's and the measured time's
    intervals are the table's)."""
    start = split_words(path) + PATH_WORDS[path] + "는 모형이 "
    ratio = "(모형 ÷ 잰 시간 {{ split.ratio|x_in }})"
    within = "잰 시간의 ±{{ anatomy.split_tolerance|percent(0) }} 안에 "
    shorter = start + "잰 시간보다 짧다" + ratio + ". "
    unseen = "이 모형이 보지 못하는 시간(커널이 이 기계의 한계 아래에서 돌거나, op 밖의 Python)"
    load = "먼저 의심할 것은 이 기계의 부하다: "  # then the model's blind spots
    return {
        "adds_up": start + within + "든다" + ratio + ".",
        "under": shorter + "나머지는 " + unseen + "이다.",
        "under_busy_time": (
            shorter
            + load
            + "time.json의 라운드가 바쁜 기계에서 돌아(CPU 몫"
            + " {{ time.contention.cpu_share|percent(0) }}) 잰 시간이 늘었을 수 있다. 그다음이 "
            + unseen
            + "이다."
        ),
        "under_busy_probes": (
            shorter
            + load
            + "기계 측정이 바쁜 기계에서 돌았다(CPU 몫"
            + " {{ anatomy.contention.cpu_share|percent(0) }}). 그다음이 "
            + unseen
            + "이다."
        ),
        "over": start + "잰 시간보다 길다" + ratio + ": 세 항이 겹쳐 돈다(디스패치를 따로 더했다).",
        "undecided": start + within + "드는지 구간으로 가를 수 없다" + ratio + ".",
        "unreliable": PATH_WORDS[path] + "의 모형은 잰 시간과 견주지 않는다(믿을 수 없는 측정).",
    }


def binding_words(path: str) -> dict[str, str]:
    """anatomy.binds_<path>'s words, one per variant."""
    words = {
        term: f"{PATH_WORDS[path]}는 {word} 항이 가장 크다." for term, word in TERM_WORDS.items()
    }
    return words | {
        "undecided": PATH_WORDS[path] + "는 가장 큰 항을 구간으로 가를 수 없다.",
        "unreliable": PATH_WORDS[path] + "의 가장 큰 항은 말하지 않는다(믿을 수 없는 측정).",
    }


def share_words(path: str, term: str) -> dict[str, str]:
    """anatomy.<term>_share_<path>'s words (a table cell), one per variant."""
    return {
        "share": split_words(path) + '몫 {{ split.share_interval("' + term + '")|percent_in }}',
        "exceeds": "잰 시간보다 길다: 프로브가 한계를 낮게 잡았다",
        "undecided": "몫: 구간으로 가를 수 없음",
        "unreliable": "믿을 수 없는 측정",
    }


# one sentence per path of each: its predicate, words and check, each made for the path
PATH_SENTENCES = {"binds": (binding_of, binding_words), "fit": (fit_of, fit_words)}


ANATOMY_SENTENCES = (
    *(
        Sentence(f"anatomy.{name}_{path}", holds=holds(path), words=words(path), check=recomputed)
        for name, (holds, words) in PATH_SENTENCES.items()
        for path in PATHS
    ),
    *(
        Sentence(
            f"anatomy.{term}_share_{path}",
            holds=share_of(path, term),
            words=share_words(path, term),
            check=recomputed,
        )
        for path in PATHS
        for term in TERMS
    ),
    Sentence(
        "anatomy.glance",
        holds=glance_binding,
        words={
            f"{cached}/{uncached}": (
                f"캐시 경로: {BINDING_WORDS[cached]}, 미사용: {BINDING_WORDS[uncached]}"
            )
            for cached in BINDING_WORDS
            for uncached in BINDING_WORDS
        },
        check=recomputed,
    ),
)


def fixed_step(time: Timing) -> Interval:
    """The minimal-width generate's time per call of forward (time.json's narrow side over its N
    calls): a lower bound of the fixed cost per step, its interval at the timing's level."""
    runs = [seconds / time.new_tokens for seconds in time.narrow_runs_s]
    return median_interval(runs, look_level(time.runs, time.max_runs))


def fixed_beside_sweep(anatomy: Anatomy, sweep: Sweep | None, time: Timing | None) -> str | None:
    """anatomy.fixed_beside_sweep's variant: the sweep's fitted per-step intercept (each call's
    weight reads in it) against time.json's fixed step plus the weight bytes of a cached call
    over the bandwidth at its working set: "explained" where it lies within their intervals'
    sum, "unexplained" where outside; None without a holding fit or time.json."""
    if sweep is None or time is None or not sweep.fit.holds:
        return None
    low, high = fixed_plus_weights(
        fixed_step(time), anatomy, anatomy.probes()["bandwidth_with_cache"].per_s_interval
    )
    return "explained" if low <= sweep.fit.fixed_s_with_cache <= high else "unexplained"


def fixed_plus_weights(step: Interval, anatomy: Anatomy, bandwidth: Interval):
    """(low, high): the fixed step plus one cached call's weight bytes at the bandwidth."""
    weights = anatomy.with_cache.steps[-1].bytes_parts["weights"]
    return step.low + weights / bandwidth.high, step.high + weights / bandwidth.low


PROFILE_SENTENCES = (
    Sentence(
        "anatomy.fixed_beside_sweep",
        holds=fixed_beside_sweep,
        words={
            "explained": (
                "`## 길이에 따른 비용`의 적합이 준 단계마다의 절편"
                " {{ (sweep.fit.fixed_s_with_cache * 1000)|fmt('.2f') }} ms는 이 고정비에 캐시"
                " 경로 한 호출의 가중치 바이트 ÷ 잰 대역폭을 더한 구간 안에 든다: 그 차이는"
                " 가중치를 읽는 시간으로 설명된다."
            ),
            "unexplained": (
                "`## 길이에 따른 비용`의 적합이 준 단계마다의 절편"
                " {{ (sweep.fit.fixed_s_with_cache * 1000)|fmt('.2f') }} ms는 이 고정비에 캐시"
                " 경로 한 호출의 가중치 바이트 ÷ 잰 대역폭을 더한 구간 밖이다: 그 차이는 이"
                " 측정들로 설명되지 않는다."
            ),
        },
        check=recomputed,
    ),
)

# The section's sentences (mminfer.records.sentences), collected by render.sentence_table.
SENTENCES = (*ALONE_SENTENCES, *ANATOMY_SENTENCES, *PROFILE_SENTENCES)
