"""The facts that read several measurements' records: the report's joins.

A measures folder never imports another (.importlinter, docs/development.md "Layers"): each
measurement's module (mminfer/measures/<rule>/<name>.py) decides the facts of its own record, and
of its rule's other records, alone. Where a section also reads another rule's record (time.json's
reason line from sweep.json and anatomy.json, the glance of ## KV 캐시, capacity beside serve), its
facts are its own module's and this module's join on top: each join is named after the
measurements it reads, its parameters in order (``sweep_time_facts(sweep, time)``), and the
registry (mminfer.measurements) names it as the section's ``facts`` or ``glance``. The report lies
above the measures, so this module imports any measurement's record at run time.
"""

from __future__ import annotations

from mminfer.measures.anatomy.anatomy import (
    PATHS,
    TERMS,
    Anatomy,
    PathSplit,
    anatomy_facts,
    path_splits,
)
from mminfer.measures.batch.batch import Batch
from mminfer.measures.cache.count import Count
from mminfer.measures.cache.same import Same, same_facts
from mminfer.measures.conversation.conversation import Conversation, conversation_facts
from mminfer.measures.remedies.remedies import Remedies
from mminfer.measures.repetition.repetition import Repetition, repetition_facts
from mminfer.measures.serve.serve import Serve, bound_of, bound_supported, serve_facts
from mminfer.measures.sweep.sweep import (
    Sweep,
    SweepPoint,
    clocked_among_first,
    run_sums,
    sweep_facts,
)
from mminfer.measures.temp.temp import Temperatures
from mminfer.measures.time.latency import Latency, latency_facts
from mminfer.measures.time.time import Timing, fixed_cost, time_facts
from mminfer.measures.topk.topk import TopK, topk_facts
from mminfer.measures.topp.topp import TopP
from mminfer.records import Glance, token_ratio
from mminfer.records.interval import (
    FAMILY_LEVEL,
    Interval,
    against,
    look_level,
    median_interval,
    paired_ratios,
)
from mminfer.records.machine import BUSY_PRESSURE, BUSY_SHARE, Contention, is_busy, two_groups
from mminfer.records.reconcile import reconcile, reconcile_runs
from mminfer.records.sentences import Sentence

# --- ## KV 캐시 (same.json beside count.json, time.json and kvbytes.json) -------------------------


def same_time_count_glance(same: Same, time: Timing, count: Count | None = None) -> Glance:
    """## KV 캐시's row: the task's three numbers (tokens, time, bytes) and what they teach.

    The lesson: "same_cheaper" (the same ids, the cache faster as measured), "same_untimed" (the
    same ids, the timing untrusted), "rounding" (ids parted where rounding explains it) or
    "suspect" (parted beyond rounding). The row's numbers come from the sections' facts. Its
    terms: the token ratio, the speedup, the CV and the fixed cost the section states."""
    facts = same_facts(same)
    if same.same_ids:
        lesson = "same_cheaper" if time.verdict != "untrusted" else "same_untimed"
    elif facts["rounding_sized"]:
        lesson = "rounding"
    else:
        lesson = "suspect"
    terms = ("token_ratio", "speedup", "cv")
    if count is not None and fixed_cost_said(time, count) is not None:
        terms += ("fixed_cost",)
    return Glance(lesson=lesson, verdict=time.verdict, terms=terms)


# --- time.json beside count.json: the speedup against the token ratio, and the reason ----------


def time_count_facts(time: Timing, count: Count) -> dict:
    """time.json's facts (mminfer.measures.time.time.time_facts) with the token ratio of
    count.json beside the speedup; the reason the two differ is time.json's own narrow side
    (time.fixed_cost), timed in the same rounds."""
    ratio = token_ratio(count)
    return time_facts(time) | {
        "token_ratio": ratio,
        "speedup_below_token_ratio": time.speedup < ratio,
        "narrow_interval": median_interval(
            time.narrow_runs_s, look_level(time.runs, time.max_runs)
        ),
    }


def reason(time: Timing, count: Count) -> str | None:
    """time.reason: the speedup's interval against the token ratio (count.json): "short" (wholly
    below it), "past" (wholly above), "undecided"; None where the cache was not decided faster
    (time.cache_faster says why) or the time must not be believed."""
    if time.cache_faster != "yes" or time.verdict == "untrusted":
        return None
    return REASONS[against(time.speedup_interval, token_ratio(count))]


def reason_in_runs(time: Timing, count: Count, chosen: str) -> bool:
    """time.reason's check: the speedup's interval recomputed from the raw rounds, against the
    token ratio counted from count.json's fed tokens, gives the variant written."""
    ratio = count.fed_without_cache / count.fed_with_cache
    speedups = paired_ratios(time.without_cache_runs_s, time.with_cache_runs_s)
    found = median_interval(speedups, look_level(time.runs, time.max_runs))
    return REASONS[against(found, ratio)] == chosen


def fixed_cost_said(time: Timing, count: Count) -> str | None:
    """time.fixed_cost's variant: time.json's own decision of its narrow side (fixed_cost: the
    minimal-width generate over the cached one, round by round), said wherever the speedup does
    not pass the token ratio (short of it, or not placed against it: the cache not decided
    faster, or its interval holding the ratio); None where the time must not be believed or the
    speedup passes the token ratio (the fixed cost is then not the reason)."""
    if time.verdict == "untrusted" or reason(time, count) == "past":
        return None
    return fixed_cost(time)


def fixed_cost_in_runs(time: Timing, count: Count, chosen: str) -> bool:
    """time.fixed_cost's check: the shares recomputed from the raw runs (narrow over cached,
    round by round, at the timing's per-look level) give the variant written: wholly below 1,
    wholly above, holding 1, or short of their level."""
    level = look_level(time.runs, time.max_runs)
    shares = median_interval(paired_ratios(time.narrow_runs_s, time.with_cache_runs_s), level)
    found = "undecided"
    if shares.decisive and shares.high < 1:
        found = "below"
    elif shares.decisive and shares.low > 1:
        found = "above"
    elif shares.decisive:
        found = "reaches"
    return found == chosen


REASONS = {"below": "short", "above": "past", "undecided": "undecided"}
# Where time.json's rounds ran on a busy machine, a sentence that blames Python or the kernels
# names the load first (issue 47).
BUSY_TIME = "{{ 'time.json을 잴 때 기계가 바빴고, ' if time.contention and time.contention.busy }}"
RATIO = "{{ (count.fed_without_cache / count.fed_with_cache)|fmt('.1f') }}배"
NARROW = (
    "같은 라운드에서 잰 최소 폭 모델(층과 헤드는 그대로, 은닉 {{ time.narrow_shape.hidden_size }},"
    " 어휘 {{ time.narrow_shape.vocab_size }})의 같은 생성은 캐시 경로 시간의"
)
SHARE = " {{ time.fixed_share_interval|percent_in }}"
TIME_SENTENCES = (
    Sentence(
        "time.reason",
        holds=reason,
        words={
            "short": (
                "그런데 speedup은 라운드마다 짝지어 봐도 토큰 비율(" + RATIO + ")에 못 미친다:"
                " 캐시는 넣는 토큰을 줄여도 `forward` 호출 수(N = {{ time.new_tokens }})는"
                " 줄이지 못한다."
            ),
            "past": (
                "speedup이 토큰 비율(" + RATIO + ")보다 크다: 캐시 없는 경로는 어텐션이 문맥"
                " 길이의 제곱으로 커져 넣는 토큰보다 시간이 더 빨리 는다."
            ),
            "undecided": (
                "라운드 {{ time.runs_done }}회로는 speedup이 토큰 비율(" + RATIO + ")에 못"
                " 미치는지 가를 수 없다."
            ),
        },
        check=reason_in_runs,
    ),
    Sentence(
        "time.fixed_cost",
        holds=fixed_cost_said,
        words={
            "below": (
                BUSY_TIME + NARROW + SHARE + "가 걸렸다: 적어도 그만큼은 넣는 토큰 수와 무관하게"
                " 호출마다 드는 고정비(파이썬과 커널 호출)다."
            ),
            "reaches": (
                BUSY_TIME + NARROW + SHARE + "가 걸려 캐시 경로보다 빠르다고 가를 수 없다: 캐시"
                " 경로 시간은 (거의) 모두 호출마다 드는 고정비(파이썬과 커널 호출)다."
            ),
            "above": (
                NARROW + SHARE + "로 오히려 더 걸렸다: 이 기계에서는 최소 폭 모델이 고정비의"
                " 아래 한계가 되지 못해, 이 측정으로는 그 까닭을 가를 수 없다."
            ),
            "undecided": (
                "같은 라운드에서 잰 최소 폭 모델의 같은 생성이 캐시 경로 시간의 몇 %인지는"
                " 라운드 {{ time.runs_done }}회로는 가를 수 없다: 고정비의 몫은 말하지 않는다."
            ),
        },
        check=fixed_cost_in_runs,
    ),
)


# --- anatomy.json split against time.json's medians ------------------------------------------


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
        return None if split is None else split.binding()

    return binding


def fit_of(path: str):
    """anatomy.fit_<path>: where the model lies against the measured time (PathSplit.fit); a
    model short of it on a busy machine names the load first ("under_busy_time": time.json's
    runs busy, "under_busy_probes": the probes')."""

    def fit(anatomy: Anatomy, time: Timing | None) -> str | None:
        split = split_of(anatomy, time, path)
        if split is None:
            return None
        found = split.fit()
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
        return None if split is None else split.share_of(term)

    return share


def glance_binding(anatomy: Anatomy, time: Timing | None) -> str | None:
    """anatomy.glance: both paths' binding terms, "<with_cache>/<without_cache>"."""
    found = [binding_of(path)(anatomy, time) for path in PATHS]
    return None if None in found else "/".join(found)


# --- the checks: the same verdicts recomputed from the probes' and time.json's raw runs -----------


def terms_in_runs(anatomy: Anatomy, path: str) -> dict[str, tuple[Interval, bool]]:
    """Each term of ``path`` from its probe's runs: every run's seconds scaled to the term's work
    (its interval at FAMILY_LEVEL), and whether the runs part into two groups."""
    probes = anatomy.probes()
    work = anatomy.term_work(path)
    found = {}
    for term, name in anatomy.term_probes(path).items():
        speed = probes[name]
        seconds = [run_s * work[term] / speed.work for run_s in speed.runs_s]
        found[term] = (median_interval(seconds, FAMILY_LEVEL), two_groups(speed.runs_s))
    return found


def verdicts_in_runs(anatomy: Anatomy, time: Timing, path: str) -> dict[str, str]:
    """binding, fit and each term's share of ``path``, decided from the raw runs alone: a decision
    only where every interval it reads holds together at FAMILY_LEVEL (their misses summed)."""
    found = terms_in_runs(anatomy, path)
    runs = getattr(time, f"{path}_runs_s")
    measured = median_interval(runs, look_level(time.runs, time.max_runs))
    terms = {term: seconds for term, (seconds, _) in found.items()}
    parted = {term for term, (_, two) in found.items() if two}
    missed = sum(1 - seconds.coverage for seconds in terms.values())
    missed_all = missed + 1 - measured.coverage
    floor = 1 - FAMILY_LEVEL + 1e-12
    verdicts = {"binding": "undecided", "fit": "undecided"}
    if missed <= floor:
        for term, seconds in terms.items():
            if all(seconds.low > terms[other].high for other in terms if other != term):
                verdicts["binding"] = term
    low = terms["dispatch"].low + max(terms["arithmetic"].low, terms["memory"].low)
    high = terms["dispatch"].high + max(terms["arithmetic"].high, terms["memory"].high)
    low, high = low / measured.high, high / measured.low
    tolerance = anatomy.split_tolerance
    if missed_all <= floor and measured.runs > 1:
        if high < 1 - tolerance:
            verdicts["fit"] = "under"
        elif low > 1 + tolerance:
            verdicts["fit"] = "over"
        elif 1 - tolerance <= low and high <= 1 + tolerance:
            verdicts["fit"] = "adds_up"
    for term, seconds in terms.items():
        share = "undecided"
        missed_share = 1 - seconds.coverage + 1 - measured.coverage
        if missed_share <= floor and measured.runs > 1:
            if seconds.high / measured.low < 1:
                share = "share"
            elif seconds.low / measured.high > 1:
                share = "exceeds"
        verdicts[term] = "unreliable" if term in parted else share
    if parted:
        verdicts["binding"] = verdicts["fit"] = "unreliable"
    return verdicts


def binding_in_runs(path: str):
    """anatomy.binds_<path>'s check."""

    def check(anatomy: Anatomy, time: Timing, chosen: str) -> bool:
        return verdicts_in_runs(anatomy, time, path)["binding"] == chosen

    return check


def fit_in_runs(path: str):
    """anatomy.fit_<path>'s check; a busy variant also needs the contention it names."""

    def check(anatomy: Anatomy, time: Timing, chosen: str) -> bool:
        busy = {"under_busy_time": time.contention, "under_busy_probes": anatomy.contention}
        if chosen in busy:
            load = busy[chosen]
            named = load is not None and is_busy(load.cpu_share, load.cpu_pressure)
            return named and verdicts_in_runs(anatomy, time, path)["fit"] == "under"
        return verdicts_in_runs(anatomy, time, path)["fit"] == chosen

    return check


def share_in_runs(path: str, term: str):
    """anatomy.<term>_share_<path>'s check."""

    def check(anatomy: Anatomy, time: Timing, chosen: str) -> bool:
        return verdicts_in_runs(anatomy, time, path)[term] == chosen

    return check


def glance_in_runs(anatomy: Anatomy, time: Timing, chosen: str) -> bool:
    """anatomy.glance's check: both paths' binding terms from the raw runs."""
    found = [verdicts_in_runs(anatomy, time, path)["binding"] for path in PATHS]
    return "/".join(found) == chosen


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
PATH_SENTENCES = {
    "binds": (binding_of, binding_words, binding_in_runs),
    "fit": (fit_of, fit_words, fit_in_runs),
}
ANATOMY_SENTENCES = (
    *(
        Sentence(f"anatomy.{name}_{path}", holds=holds(path), words=words(path), check=check(path))
        for name, (holds, words, check) in PATH_SENTENCES.items()
        for path in PATHS
    ),
    *(
        Sentence(
            f"anatomy.{term}_share_{path}",
            holds=share_of(path, term),
            words=share_words(path, term),
            check=share_in_runs(path, term),
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
        check=glance_in_runs,
    ),
)


# --- sweep.json beside time.json -------------------------------------------------------------


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


def against_time_supported(sweep: Sweep, time: Timing, chosen: str) -> bool:
    """sweep.against_time's check: the speedup's per-round ratios (at the time job's level of
    its looks) and the sweep's per-run ratios at that length, recomputed and reconciled."""
    point = point_of(sweep, time)
    if point is None:
        return False
    if clocked_among_first(sweep, point.new_tokens) < point.new_tokens:
        return chosen == "estimate"
    steps = sweep.steps
    without = run_sums(steps.without_cache_runs_s, steps.filled_without_cache_s, point.new_tokens)
    with_ = run_sums(steps.with_cache_runs_s, steps.with_cache_s, point.new_tokens)
    level = look_level(time.runs, time.max_runs)
    speedups = paired_ratios(time.without_cache_runs_s, time.with_cache_runs_s)
    found = reconcile(
        median_interval(speedups, level), median_interval(paired_ratios(without, with_))
    )
    return found == chosen


# --- latency.json beside sweep.json ----------------------------------------------------------


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


def crossing_in_runs(latency: Latency, sweep: Sweep, chosen: str) -> bool:
    """latency.sweep_crosses's check: every uncached step clocked in all the sweep's runs, in
    step order, its runs' interval at FAMILY_LEVEL against the TPOT limit: "crosses" where the
    first step not wholly below lies wholly above, "undecided" where it lies across, "never"
    where there is none."""
    limit = latency.tpot_limit_s
    for step in range(len(sweep.steps.without_cache_s)):
        runs = [run[step] for run in sweep.steps.without_cache_runs_s]
        if None in runs:
            continue
        found = median_interval(runs, FAMILY_LEVEL)
        if not (found.decisive and found.high < limit):
            return chosen == ("crosses" if found.decisive and found.low > limit else "undecided")
    return chosen == "never"


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
        check=crossing_in_runs,
    ),
)


# --- capacity.json beside serve.json ---------------------------------------------------------


def users_bound(serve: Serve | None) -> str:
    """Which bound serve.json found first: "memory" (the formula's count decides the users per
    card), "speed" (serve.bound's: a batch's decode step decided over the target, and no more
    users by speed than by memory), "undecided" (serve's passes cannot say whether a batch
    missed the target), or "unmeasured" (neither, or no serve.json: the cards' speed was not
    measured)."""
    users = serve.users if serve is not None else None
    memory_first = (
        users is not None
        and users.users_by_memory is not None
        and users.users_by_memory < users.users_by_speed
    )
    if memory_first:
        return "memory"
    if serve is None:
        return "unmeasured"
    return {"speed": "speed", "undecided": "undecided"}.get(bound_of(serve), "unmeasured")


def users_bound_supported(serve: Serve | None, chosen: str) -> bool:
    """capacity.bound's check: serve.bound's, recomputed from the passes."""
    if serve is None:
        return chosen == "unmeasured"
    if chosen in ("memory", "speed", "undecided"):
        return bound_supported(serve, chosen)
    return bound_supported(serve, "none")


CAPACITY_SENTENCES = (
    Sentence(
        "capacity.bound",
        holds=users_bound,
        words={
            "memory": "그 수가 카드당 사용자를 정한다",
            "speed": "그 수는 메모리의 상한이고, 이 기계에서는 속도가 먼저 묶었다",
            "unmeasured": "그 수는 메모리로 본 상한이다(속도는 재지 않았다)",
            "undecided": (
                "그 수는 메모리의 상한이다(속도가 먼저 묶는지는 `## 서빙`의 패스로 가를 수 없었다)"
            ),
        },
        check=users_bound_supported,
    ),
)


# --- serve.json beside sweep.json ------------------------------------------------------------


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


def prefill_against_sweep_supported(serve: Serve, sweep: Sweep, chosen: str) -> bool:
    """serve.prefill_against_sweep's check: serve's passes' prefills and the sweep's runs' first
    cached steps, recomputed and reconciled."""
    first = serve.batches[0]
    if first.prefills_s is None or sweep.prompt_len != serve.prompt_len:
        return False
    ttfts = [run[0] for run in sweep.steps.with_cache_runs_s]
    return reconcile_runs(first.prefills_s, ttfts) == chosen


def prefill_against_latency(sweep: Sweep, latency: Latency | None) -> str | None:
    """sweep.prefill_against_latency: sweep.json's time to first token (the cached generation's
    first forward) beside latency.json's (the streamer's first token of time.json's cached runs),
    the same P tokens prefilled (mminfer.records.reconcile); None where not the same prompt."""
    if latency is None or latency.prompt_len != sweep.prompt_len:
        return None
    runs = [run.ttft_s for run in latency.with_cache.runs]
    return reconcile(median_interval(runs), sweep.ttft_interval)


def prefill_against_latency_supported(sweep: Sweep, latency: Latency, chosen: str) -> bool:
    """sweep.prefill_against_latency's check, from both jobs' raw runs."""
    runs = [run.ttft_s for run in latency.with_cache.runs]
    ttfts = [run[0] for run in sweep.steps.with_cache_runs_s]
    return reconcile_runs(runs, ttfts) == chosen


# --- conversation.json beside serve.json -----------------------------------------------------


def conversation_serve_facts(conversation: Conversation, serve: Serve | None = None) -> dict:
    """conversation.json's facts (mminfer.measures.conversation.conversation.conversation_facts)
    and, with serve.json, its users by memory beside the shared prefix's: ``serve_users`` where
    both counted them, ``same_context`` where serve.json counted at this P + N."""
    serve_users = users_beside(conversation, serve)
    return conversation_facts(conversation) | {
        "serve_users": serve_users,
        "same_context": same_context(conversation, serve) == "same",
    }


def users_beside(conversation: Conversation, serve: Serve | None):
    """serve.json's users by memory, where both it and the conversation counted them."""
    counted = conversation.shared_prefix.users_copied is not None
    if counted and serve is not None and serve.users.users_by_memory is not None:
        return serve.users
    return None


def same_context(conversation: Conversation, serve: Serve | None) -> str | None:
    """conversation.same_context: serve.json counted its users at this P + N ("same") or at
    another context ("other"); None where either did not count them."""
    users = users_beside(conversation, serve)
    if users is None:
        return None
    shared = conversation.shared_prefix
    return "same" if users.context == shared.prompt_len + shared.new_tokens else "other"


CONVERSATION_SENTENCES = (
    Sentence(
        "conversation.same_context",
        holds=same_context,
        words={
            "same": "컨텍스트가 같으므로 위의 두 수와 바로 견줄 수 있다.",
            "other": "여기의 P + N과 컨텍스트가 달라 위의 두 수와 바로 견줄 수는 없다.",
        },
    ),
)


# --- topk.json beside temp.json and topp.json ------------------------------------------------


def topk_temp_topp_facts(
    topk: TopK, temp: Temperatures | None = None, topp: TopP | None = None
) -> dict:
    """topk.json (mminfer.measures.topk.topk.topk_facts) beside temp.json and topp.json (the
    same experiments with top-k off).

    Per temperature: the distinct answers both ways, which way top-k moved them, the probability
    it cut; per p: the survivors both ways; whether top-k changed any count at all.
    """
    temperatures = []
    for key, summary in topk.temp.items():
        without = temp[key].distinct if temp is not None and key in temp else None
        temperatures.append(
            {
                "temperature": key,
                "with_top_k": summary,
                "without_top_k": without,
                "moved": None if without is None else direction(summary.distinct, without),
            }
        )
    ps = []
    for key, survivors in topk.topp.items():
        without = topp.get(key) if topp is not None else None
        ps.append({"p": key, "with_top_k": survivors, "without_top_k": without})
    moved = [row["moved"] for row in temperatures if row["moved"] is not None]
    return topk_facts(topk) | {
        "without_counts": [row["without_top_k"] for row in temperatures],
        "temperatures": temperatures,
        "ps": ps,
        "compared_with_temp": bool(moved),
        "counts_moved": any(way != "same" for way in moved),
        "compared_with_topp": compared_with_topp(topk, topp),
    }


def topk_temp_glance(topk: TopK, temp: Temperatures | None = None) -> Glance:
    """## top-k's row: its lesson the sentence topk.lesson's variant."""
    return Glance(
        lesson=counts_against_temp(topk, temp), terms=("top_k", "distinct", "survivor", "seed")
    )


def direction(after: int, before: int) -> str:
    """ "fewer", "same" or "more": how a count moved from ``before`` to ``after``."""
    if after < before:
        return "fewer"
    if after > before:
        return "more"
    return "same"


def counts_against_temp(topk: TopK, temp: Temperatures | None) -> str:
    """The distinct answers, top-k on against temp.json's (top-k off), each temperature one draw
    of the same seed's samples: "moved" (they differ at two temperatures or more), "moved_once"
    (at one: one sample, too little to say top_k changes the count), "same" (every temperature of
    topk.json has temp.json's row, with the same count), "alone" (no temp.json, or not every
    temperature in it)."""
    compared = [
        (summary.distinct, temp[key].distinct)
        for key, summary in topk.temp.items()
        if temp is not None and key in temp
    ]
    differ = sum(on != off for on, off in compared)
    if differ > 1:
        return "moved"
    if differ == 1:
        return "moved_once"
    if compared and len(compared) == len(topk.temp):
        return "same"
    return "alone"


def survivors_against_topp(topk: TopK, topp: TopP | None) -> str | None:
    """The survivors, top-k then top-p against top-p alone (topp.json), per p: "fewer" (at every
    p), "some" (fewer at some p, the same at the others), "same" (at every p); None where more
    survive at some p, or topp.json lacks a p."""
    if topp is None or not topk.topp or any(topp.get(key) is None for key in topk.topp):
        return None
    pairs = [(survivors, topp[key]) for key, survivors in topk.topp.items()]
    if all(on < off for on, off in pairs):
        return "fewer"
    if any(on > off for on, off in pairs):
        return None
    if any(on < off for on, off in pairs):
        return "some"
    return "same"


def compared_with_topp(topk: TopK, topp: TopP | None) -> bool:
    """topp.json has a p of topk.json's with survivors to compare."""
    return topp is not None and any(topp.get(key) for key in topk.topp)


def mass_against_topp(topk: TopK, topp: TopP | None) -> str | None:
    """Beside topp.json: "renormalised" (the top k hold less than all the probability,
    top_k_mass < 1, so top-p after top-k counts within a renormalised mass and reaches p sooner),
    "whole" (they hold it all); None without topp.json to compare with."""
    if not compared_with_topp(topk, topp):
        return None
    if topk.top_k_mass < 1.0:
        return "renormalised"
    if topk.top_k_mass >= 1.0:
        return "whole"
    return None


# a temperature's count of distinct answers in temp.json (top-k off), "—" where it has none
WITHOUT_TOP_K = '(temp[key].distinct if key in temp else none)|default("—", true)'
TOPK_SENTENCES = (
    Sentence(
        "topk.counts",
        holds=counts_against_temp,
        words={
            "moved": (
                'generate의 기본값 top_k={{ topk.top_k|particle("을/를") }} 켜 두자 온도 실험의'
                " 서로 다른 답(distinct)이 {% for key in topk.temp %}{{ "
                + WITHOUT_TOP_K
                + ' }}{{ " → " if not loop.last }}{% endfor %}에서'
                ' {{ topk.temp.values()|map(attribute="distinct")|join(" → ")'
                '|particle("으로/로") }} 바뀌었다: 온도마다 같은 시드로 샘플 {{ topk.samples }}개를'
                " 한 번씩 뽑은 결과다. 두 온도 이상에서 달라, 과제가 top_k=0을 요구하는 까닭이다."
            ),
            "moved_once": (
                'generate의 기본값 top_k={{ topk.top_k|particle("을/를") }} 켜 두자 온도'
                " {% for key, s in topk.temp.items() if key in temp and s.distinct !="
                " temp[key].distinct %}{{ key }}에서만 서로 다른 답(distinct)이"
                " {{ temp[key].distinct }}개에서 {{ s.distinct }}개로 달랐다{% endfor %}: 같은"
                " 시드로 샘플 {{ topk.samples }}개를 한 번 뽑은 한 표본이라, top_k가 답 수를"
                " 바꾼다고 말할 수는 없다."
            ),
            "same": (
                'generate의 기본값 top_k={{ topk.top_k|particle("을/를") }} 켜 두어도 이'
                " 모델에서는 온도마다 서로 다른 답(distinct)의 수가 temp.json과 같았다. 잘린 확률은"
                " 표에 있다."
            ),
            "alone": (
                'generate의 기본값 top_k={{ topk.top_k|particle("을/를") }} 켜 둔 채 온도'
                " 실험과 top-p를 다시 쟀다."
            ),
        },
    ),
    Sentence(
        "topk.lesson",
        holds=counts_against_temp,
        words={
            "moved": "기본 top_k를 켜자 두 온도 이상에서 답 수가 달랐다(온도마다 한 표본)",
            "moved_once": "한 온도의 한 표본에서만 답 수가 달랐다: top_k의 효과라 말할 수 없다",
            "same": "이 모델에서는 기본 top_k가 답 수를 바꾸지 않았다",
            "alone": "기본 top_k를 켠 온도 실험과 top-p",
        },
    ),
    Sentence(
        "topk.survivors",
        holds=survivors_against_topp,
        words={
            "fewer": (
                "[bos]{{ topk.prefix }} 뒤에서는 top-k를 먼저 적용하자 모든 p에서 top-p만 쓸"
                ' 때보다 적게 남았다({{ topk.topp.values()|join("/") }} 대'
                ' {% for p in topk.topp %}{{ topp[p] }}{{ "/" if not loop.last }}{% endfor %}).'
            ),
            "some": (
                "[bos]{{ topk.prefix }} 뒤에서는 top-k를 먼저 적용하자 p = "
                "{% for p, n in topk.topp.items() if n < topp[p] %}{{ p }}"
                '{{ ", " if not loop.last }}{% endfor %}에서 top-p만 쓸 때보다 적게 남았고, p = '
                "{% for p, n in topk.topp.items() if n == topp[p] %}{{ p }}"
                '{{ ", " if not loop.last }}{% endfor %}에서는 같았다.'
            ),
            "same": (
                "[bos]{{ topk.prefix }} 뒤에서는 top-k를 먼저 적용해도 어느 p에서나 생존 후보 수가"
                " 같았다."
            ),
        },
    ),
    Sentence(
        "topk.mass",
        holds=mass_against_topp,
        words={
            "renormalised": (
                "그 자리에서 상위 {{ topk.top_k }}개가 가진 확률은"
                " {{ topk.top_k_mass|percent }}이고, top-k 뒤의 top-p는 그 안에서 다시 1로 맞춘"
                " 확률을 센다: top-p만 쓸 때의 p ×"
                " {{ topk.top_k_mass|percent }}에서 자르는 셈이라 누적 확률이 p에 더 일찍 닿는다."
            ),
            "whole": (
                "그 자리에서는 상위 {{ topk.top_k }}개가 확률을 모두 가져(top_k_mass"
                " {{ topk.top_k_mass|percent }}) top-k가 top-p의 셈을 다시 맞추지 않는다."
            ),
        },
    ),
)


# --- repetition.json beside temp.json --------------------------------------------------------


def repetition_temp_facts(repetition: Repetition, temp: Temperatures | None = None) -> dict:
    """repetition.json's facts (mminfer.measures.repetition.repetition.repetition_facts) and
    penalty 1.0's distinct answers beside temp.json's at that temperature (``temp_distinct``)."""
    facts = repetition_facts(repetition)
    off = facts["off"]
    temp_row = temp.get(facts["temperature"]) if temp is not None else None
    temp_distinct = None if temp_row is None else temp_row.distinct
    compared = off is not None and temp_distinct is not None
    return facts | {
        "matches_temp": off.distinct == temp_distinct if compared else None,
        "temp_distinct": temp_distinct,
    }


def off_against_temp(repetition: Repetition, temp: Temperatures | None) -> str | None:
    """repetition.off_matches_temp: penalty 1.0's distinct answers against temp.json's at that
    temperature: "same", "differs"; None where either is missing."""
    off = repetition.penalties.get("1.0")
    row = None if temp is None else temp.get(repr(float(repetition.temperature)))
    if off is None or row is None:
        return None
    return "same" if off.distinct == row.distinct else "differs"


TEMP_ROW = "temp[repetition.temperature|float|string]"
REPETITION_SENTENCES = (
    Sentence(
        "repetition.off_matches_temp",
        holds=off_against_temp,
        words={
            "same": (
                "페널티 1.0 행은 temp.json의 온도 {{ repetition.temperature }} 행과 같은"
                " {{ " + TEMP_ROW + ".distinct }}개다: 1.0이면 generate가 페널티를 건너뛰어 같은"
                " 난수로 같은 답을 뽑는다."
            ),
            "differs": (
                '**페널티 1.0 행({{ repetition.penalties["1.0"].distinct }}개)이 temp.json의 같은'
                " 온도({{ " + TEMP_ROW + ".distinct }}개)와 다르다**: 같은 조건이라면 같아야 하므로"
                " 이 행은 믿으면 안 된다."
            ),
        },
    ),
)


# --- the busy machine: said first, in both reports (time.json and every timing record) -------


def timed_contentions(
    time: Timing,
    batch: Batch | None = None,
    conversation: Conversation | None = None,
    repetition: Repetition | None = None,
    sweep: Sweep | None = None,
    serve: Serve | None = None,
    anatomy: Anatomy | None = None,
    remedies: Remedies | None = None,
) -> dict[str, Contention]:
    """The contention each timing record measured during its timed runs, by measurement name
    (time.json first, then in the reports' order); a record not given, or not timed, left out."""
    timed = {
        "time": time,
        "sweep": sweep,
        "anatomy": anatomy,
        "remedies": remedies,
        "serve": serve,
        "conversation": conversation,
        "repetition": None if repetition is None else repetition.timing,
        "batch": None if batch is None else batch.timing,
    }
    found = {name: getattr(record, "contention", None) for name, record in timed.items()}
    return {name: contention for name, contention in found.items() if contention is not None}


def busy_of(
    time,
    batch=None,
    conversation=None,
    repetition=None,
    sweep=None,
    serve=None,
    anatomy=None,
    remedies=None,
) -> list[dict]:
    """What the busy line names: each timing record whose contention says the machine was busy
    (``Contention.busy``), its file, the rule that re-times it and its contention, time.json
    first (the reports' opening, time.busy). The records are :func:`timed_contentions`'s."""
    measured = timed_contentions(
        time, batch, conversation, repetition, sweep, serve, anatomy, remedies
    )
    return [
        {"file": f"{name}.json", "rule": name, "contention": contention}
        for name, contention in measured.items()
        if contention.busy
    ]


def busy_recomputed(**records) -> bool:
    """time.busy's check: the busy records recomputed from their contention figures (the process's
    CPU share under BUSY_SHARE, the kernel's CPU pressure over BUSY_PRESSURE), never from the
    stored flag, are those the words name, and there is one at least. It takes the records
    busy_of names, by measurement name (mminfer.records.sentences.Sentence.supported)."""
    recomputed = [
        name
        for name, contention in timed_contentions(**records).items()
        if (contention.cpu_share is not None and contention.cpu_share < BUSY_SHARE)
        or (contention.cpu_pressure is not None and contention.cpu_pressure > BUSY_PRESSURE)
    ]
    named = [busy["rule"] for busy in busy_of(**records)]
    return bool(recomputed) and recomputed == named


def worst_contention(busy: list[dict]) -> dict:
    """The busy line's figure: the least CPU share any busy record's process got (``share``),
    or, where none was read (CUDA), the most CPU pressure (``pressure``)."""
    shares = [b["contention"].cpu_share for b in busy if b["contention"].cpu_share is not None]
    if shares:
        return {"share": min(shares)}
    pressures = [b["contention"].cpu_pressure for b in busy]
    return {"pressure": max(p for p in pressures if p is not None)}


# The busy line opens a report where a timed record it reads ran busy: those files, the worst
# figure, the command that re-times them for this report only (``retime``, from the renderer).
BUSY_FILES = '{{ busy|map(attribute="file")|join(", ") }}'
BUSY_WORST = (
    "{% set worst = busy_worst(busy) %}{% if worst.share is defined %}쓸 수 있던 CPU의"
    " {{ worst.share|percent(0) }}만 받았다{% else %}CPU 대기가"
    " {{ worst.pressure|percent(0) }}였다{% endif %}"
)
BUSY_SENTENCES = (
    Sentence(
        "time.busy",
        holds=busy_of,
        words=(
            "**바쁜 기계**: " + BUSY_FILES + "을 잴 때 " + BUSY_WORST + ". 그 시간은 믿지 말고"
            " 조용한 기계에서 다시 잴 것: `{{ retime }}`."
        ),
        check=busy_recomputed,
    ),
)


# --- sweep and serve: one quantity timed by two jobs (issue 47 point 4) -------------------------


def contention_of(record) -> Contention | None:
    """A timing record's contention, None for a record not given or not timed."""
    return getattr(record, "contention", None)


def busy_alone(one, other, names: tuple[str, str]) -> str | None:
    """Which of two timing records alone ran busy (its recorded flag), by ``names``: a load is
    named as a cause of their difference only where one side had it and the other did not;
    None where both or neither did."""
    one_busy, other_busy = (
        getattr(contention_of(record), "busy", False) for record in (one, other)
    )
    if one_busy == other_busy:
        return None
    return names[0] if one_busy else names[1]


def busy_alone_in_figures(one, other, names: tuple[str, str], chosen: str) -> bool:
    """A load cause's check: the side named ran busy by its figures (is_busy, never the stored
    flag) and the other did not."""
    busy = {}
    for name, record in zip(names, (one, other)):
        contention = contention_of(record)
        busy[name] = contention is not None and is_busy(
            contention.cpu_share, contention.cpu_pressure
        )
    (other_name,) = [name for name in names if name != chosen]
    return busy[chosen] and not busy[other_name]


ONLY_SWEEP = "이 절을 잴 때만 기계가 바빴고, "
# The load named as a cause of two timings' difference only where one side alone ran busy
# (issue 58: a cause where both sides ran under the same contention is no cause of a difference).
LOAD_SENTENCES = (
    Sentence(
        "sweep.load_against_time",
        holds=lambda time, sweep: busy_alone(time, sweep, ("time", "sweep")),
        words={"time": "time.json을 잴 때만 기계가 바빴고, ", "sweep": ONLY_SWEEP},
        check=lambda time, sweep, chosen: busy_alone_in_figures(
            time, sweep, ("time", "sweep"), chosen
        ),
    ),
    Sentence(
        "sweep.load_against_latency",
        holds=lambda latency, sweep: busy_alone(latency, sweep, ("latency", "sweep")),
        words={"latency": "time.json의 실행을 잴 때만 기계가 바빴고, ", "sweep": ONLY_SWEEP},
        check=lambda latency, sweep, chosen: busy_alone_in_figures(
            latency, sweep, ("latency", "sweep"), chosen
        ),
    ),
    Sentence(
        "serve.load_against_sweep",
        holds=lambda serve, sweep: busy_alone(serve, sweep, ("serve", "sweep")),
        words={
            "serve": "서빙을 잴 때만 기계가 바빴고, ",
            "sweep": "`## 길이에 따른 비용`을 잴 때만 기계가 바빴고, ",
        },
        check=lambda serve, sweep, chosen: busy_alone_in_figures(
            serve, sweep, ("serve", "sweep"), chosen
        ),
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
SERVE_PREFILL = "B = 1의 프리필 {{ serve.batches[0].prefill_interval|ms_in }}"
SCALE_SENTENCES = (
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
        check=against_time_supported,
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
        check=prefill_against_latency_supported,
    ),
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
        check=prefill_against_sweep_supported,
    ),
)


# --- remedies.json beside anatomy.json's profile (issue 48: consistency, not construction) ------

# The profile's category (anatomy.json profile.with_cache.parts_s, mminfer.measures.anatomy's
# CATEGORIES) each remedy removes: the cache's torch.cat for the in-place cache, repeat_kv's copies
# for the grouped attention.
REMEDY_PARTS = {
    "in_place_cache": "kv_cat",
    "gqa_without_repeat_kv": "repeat_kv",
}


def profile_part_s(anatomy: Anatomy | None, remedy: str) -> float | None:
    """The cached path's profiled seconds of ``remedy``'s category in step 1's generation (the
    rounds' median); None where anatomy.json has no profile."""
    if anatomy is None or anatomy.profile is None or "with_cache" not in anatomy.profile:
        return None
    return anatomy.profile["with_cache"].parts_s.get(REMEDY_PARTS[remedy])


def beyond_parts(remedies: Remedies, anatomy: Anatomy | None) -> dict[str, bool]:
    """Each remedy that ran with MiniMind's ids and whose category the profile holds: whether its
    recorded saving's interval (per step, times the steps) lies wholly above the category's
    profiled time (True: the two disagree)."""
    found = {}
    for name in REMEDY_PARTS:
        remedy, part = remedies.remedies.get(name), profile_part_s(anatomy, name)
        if remedy is None or part is None or not (remedy.applies and remedy.same_ids):
            continue
        found[name] = remedy.saved_per_step_interval.low * remedies.new_tokens > part
    return found


def remedies_against_parts(remedies: Remedies, anatomy: Anatomy | None = None) -> str | None:
    """remedies.within_parts: "within" (every compared saving at most its category's time within
    the intervals), "beyond" (some saving wholly above it), None (nothing to compare)."""
    if anatomy is None or remedies.new_tokens != anatomy.new_tokens:
        return None
    found = beyond_parts(remedies, anatomy)
    return None if not found else ("beyond" if any(found.values()) else "within")


def against_parts_supported(remedies: Remedies, anatomy: Anatomy, chosen: str) -> bool:
    """remedies.within_parts' check: each round's saving recomputed from the runs against the
    profiled part, independent of the stored intervals."""
    found = {}
    for name in REMEDY_PARTS:
        remedy, part = remedies.remedies.get(name), profile_part_s(anatomy, name)
        if remedy is not None and part is not None and remedy.applies and remedy.same_ids:
            saved = [b - a for a, b in zip(remedy.remedy_runs_s, remedy.minimind_runs_s)]
            level = look_level(remedy.runs, remedy.max_runs)
            found[name] = median_interval(saved, level).low > part
    return chosen == ("beyond" if any(found.values()) else "within")


REMEDIES_SENTENCES = (
    Sentence(
        "remedies.within_parts",
        holds=remedies_against_parts,
        words={
            "within": (
                "치료마다 줄인 시간(생성 한 번)은 `## 한 단계 해부`의 프로파일이 그 부분(캐시의"
                " `torch.cat`, `repeat_kv`의 복사)에 잰 시간을 구간 안에서 넘지 않는다."
            ),
            "beyond": (
                "**치료가 줄인 시간이 프로파일이 그 부분(캐시의 `torch.cat`, `repeat_kv`의 복사)에"
                " 잰 시간보다 구간째 크다**: 프로파일러의 범주 나눔(그 부분을 덜 셌다)이나 치료의"
                " A B 시간(같은 때 돈 다른 일)을 의심할 것."
            ),
        },
        check=against_parts_supported,
    ),
)


# --- the fixed cost per step, measured once: time.json's narrow side, beside anatomy and sweep ---


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


def fixed_beside_sweep_in_runs(anatomy: Anatomy, sweep: Sweep, time: Timing, chosen: str) -> bool:
    """anatomy.fixed_beside_sweep's check: the fixed step's and the bandwidth probe's intervals
    recomputed from their runs, the intercept placed against their sum again."""
    probe = anatomy.probes()["bandwidth_with_cache"]
    rates_of = median_interval([probe.work / run for run in probe.runs_s], FAMILY_LEVEL)
    step = median_interval(
        [seconds / time.new_tokens for seconds in time.narrow_runs_s],
        look_level(time.runs, time.max_runs),
    )
    low, high = fixed_plus_weights(step, anatomy, rates_of)
    inside = low <= sweep.fit.fixed_s_with_cache <= high
    return sweep.fit.holds and inside == (chosen == "explained")


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
        check=fixed_beside_sweep_in_runs,
    ),
)


# The joins' sentences (mminfer.records.sentences), collected by render.sentence_table.
SENTENCES = (
    *CAPACITY_SENTENCES,
    *TOPK_SENTENCES,
    *REPETITION_SENTENCES,
    *BUSY_SENTENCES,
    *ANATOMY_SENTENCES,
    *SCALE_SENTENCES,
    *LOAD_SENTENCES,
    *REMEDIES_SENTENCES,
    *TIME_SENTENCES,
    *PROFILE_SENTENCES,
    *CONVERSATION_SENTENCES,
    *LATENCY_SENTENCES,
)
