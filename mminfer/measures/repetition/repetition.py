"""repetition.json: what the repetition penalty changes and costs. Its record and the facts its
report section reads.

Pure Python, no torch: the report reads the record without the model code.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from mminfer.records import Answer, ChatPrompt, Glance, PretrainPrompt, RunInfo
from mminfer.records.interval import (
    Interval,
    look_level,
    ratio_decision,
    ratio_interval,
)
from mminfer.records.machine import TimedOn
from mminfer.records.moves import both_ways, never_down_some_up, never_moved, never_up_some_down
from mminfer.records.sentences import Sentence


@dataclass
class Penalty:
    """One repetition penalty of repetition.json."""

    distinct: int  # distinct answers of the samples
    samples: int
    looping: int  # answers in which some run of loop_ngram ids comes back (a repeated n-gram)
    top_share: float  # the most common answer's share
    ids_past_tokenizer: int  # the answers' ids at or past the tokenizer's end, shown as ⟨id N⟩
    answers: list[Answer]  # most common first
    greedy_ids: list[int]  # greedy after step 1's prompt with this penalty
    greedy_repeated_ngrams: int  # its runs of loop_ngram ids that repeat an earlier run
    greedy_first_divergence: int | None  # 0-based step where they leave plain greedy's; None


@dataclass
class PenaltyTiming(TimedOn):
    """What the penalty costs: the whole sampled generation with it and without, interleaved."""

    penalty: float
    rows: int  # the samples, one row each: the penalty's loop visits every row every step
    steps: int  # every step runs (no eos), so both sides do the same steps
    tokens_seen: int  # prompt + steps: the most tokens a row's penalty looks at
    with_penalty_s: float  # median
    without_penalty_s: float  # median
    per_step_with_penalty_s: float
    per_step_without_penalty_s: float
    penalty_share: float  # the median of each round's (with - without) / with: the penalty's share
    with_penalty_interval: Interval  # with_penalty_s and its interval at the per-look level
    without_penalty_interval: Interval
    per_step_with_penalty_interval: Interval  # with_penalty_interval / steps
    per_step_without_penalty_interval: Interval
    penalty_share_interval: Interval  # the per-round share's median (penalty_share), its interval
    penalty_costs: str  # the share decided: "yes" (above 0), "no" (below), "same" (both sides
    # within mminfer.records.interval.SAME_WITHIN of each other) or "undecided"
    cv_with_penalty: float
    cv_without_penalty: float
    warmup: int
    runs: int
    max_runs: int
    runs_done: int
    extra_rounds: int
    doubts: list[str]
    verdict: str  # "ok", "noisy" or "untrusted" (the penalty not slower)
    noisy_cv: float
    clock: str  # the clock the runs were read by: "perf_counter", or the tests' jitter
    with_penalty_runs_s: list[float]
    without_penalty_runs_s: list[float]


@dataclass
class Repetition:
    """repetition.json: what generate's repetition_penalty changes, and what it costs.

    temp's question, seed, samples and new tokens at one temperature, top_k=0, top_p=1.0, per
    penalty; greedy after step 1's prompt per penalty; the cost of the penalty farthest from 1.0.
    """

    temperature: float
    penalties: dict[str, Penalty]  # "1.0" -> its answers, in the config's order
    loop_ngram: int  # the n of the repeated n-gram that makes an answer "looping"
    samples: int
    new_tokens: int
    seed: int
    greedy_new_tokens: int
    timing: PenaltyTiming | None  # None: no penalty but 1.0 was asked for
    prompt: ChatPrompt
    greedy_prompt: PretrainPrompt
    run: RunInfo  # the SFT model's (samples, timing); its inputs: every file the result read
    greedy_run: RunInfo  # the pretrained model's (greedy)


def trend(counts: list[int]) -> str:
    """How counts move in order: "more" (never down, up in all), "fewer", "same" or "mixed"."""
    steps = [b - a for a, b in itertools.pairwise(counts)]
    if all(step == 0 for step in steps):
        return "same"
    if all(step >= 0 for step in steps):
        return "more"
    if all(step <= 0 for step in steps):
        return "fewer"
    return "mixed"


def repetition_facts(repetition: Repetition) -> dict:
    """repetition.json's facts: each penalty's answers and greedy, how the distinct answers move
    as the penalty grows (penalties in ascending order), the cost. Whether 1.0 drew temp.json's
    counts at that temperature is the report's join (mminfer.report.joins): ``matches_temp`` and
    ``temp_distinct`` None here.
    """
    key = repr(float(repetition.temperature))
    off = repetition.penalties.get("1.0")
    ascending = sorted(repetition.penalties, key=float)
    counts = [repetition.penalties[name].distinct for name in ascending]
    greedy_left = [
        name
        for name, penalty in repetition.penalties.items()
        if penalty.greedy_first_divergence is not None
    ]
    timing = repetition.timing
    return {
        "ids_past_tokenizer": sum(p.ids_past_tokenizer for p in repetition.penalties.values()),
        "ascending": ascending,
        "counts": counts,
        "temperature": key,
        "samples": repetition.samples,
        "new_tokens": repetition.new_tokens,
        "seed": repetition.seed,
        "loop_ngram": repetition.loop_ngram,
        "greedy_new_tokens": repetition.greedy_new_tokens,
        "greedy_prompt_len": repetition.greedy_prompt.prompt_tokens + 1,
        "penalties": repetition.penalties,
        "off": off,
        "matches_temp": None,
        "temp_distinct": None,
        "greedy_left": greedy_left,
        "timing": timing,
        "lora": repetition.run.lora is not None,
        "dtype": repetition.run.dtype,
        "device": repetition.run.device,
    }


def changed_from_off(repetition: Repetition) -> str | None:
    """repetition.changes_answers: "changed" where some penalty's sampled answers or greedy ids
    differ from penalty 1.0's, "nothing" where none does; None without 1.0 and another."""
    penalties = repetition.penalties
    off = penalties.get("1.0")
    if off is None or len(penalties) < 2:
        return None
    off_answers = [(a.answer, a.count) for a in off.answers]
    for penalty in penalties.values():
        answers = [(a.answer, a.count) for a in penalty.answers]
        if answers != off_answers or penalty.greedy_ids != off.greedy_ids:
            return "changed"
    return "nothing"


def ascending_values(repetition: Repetition, name: str) -> list:
    """A field of every penalty, penalties in ascending order."""
    ascending = sorted(repetition.penalties, key=float)
    return [getattr(repetition.penalties[key], name) for key in ascending]


def distinct_trend(repetition: Repetition) -> str | None:
    """repetition.distinct_trend: how the distinct answers move as the penalty grows
    (:func:`trend`); None for one penalty."""
    counts = ascending_values(repetition, "distinct")
    return trend(counts) if len(counts) > 1 else None


def greedy_repeats_trend(repetition: Repetition) -> str | None:
    """repetition.greedy_repeats_trend: how greedy's repeated n-grams move as the penalty grows;
    None for one penalty."""
    repeats = ascending_values(repetition, "greedy_repeated_ngrams")
    return trend(repeats) if len(repeats) > 1 else None


def counts_move(values: list, chosen: str) -> bool:
    """Whether ``values`` (penalties ascending) move as a trend's variant says, by the signs of
    their steps (mminfer.records.moves), apart from :func:`trend`."""
    said = {
        "more": never_down_some_up(values),
        "fewer": never_up_some_down(values),
        "same": never_moved(values),
        "mixed": both_ways(values),
    }
    return said[chosen]


def distinct_in_counts(repetition: Repetition, chosen: str) -> bool:
    """repetition.distinct_trend's check: the distinct answers printed, penalties ascending by
    value."""
    ascending = sorted(repetition.penalties, key=float)
    return counts_move([repetition.penalties[key].distinct for key in ascending], chosen)


def greedy_repeats_in_counts(repetition: Repetition, chosen: str) -> bool:
    """repetition.greedy_repeats_trend's check: greedy's repeated n-grams printed, penalties
    ascending by value."""
    ascending = sorted(repetition.penalties, key=float)
    counts = [repetition.penalties[key].greedy_repeated_ngrams for key in ascending]
    return counts_move(counts, chosen)


def samples_never_loop(repetition: Repetition) -> bool:
    """repetition.samples_never_loop: no sampled answer loops at any penalty."""
    return all(penalty.looping == 0 for penalty in repetition.penalties.values())


COSTS = {"yes": "share", "same": "same", "no": "not_slower", "undecided": "undecided"}


def cost_of(repetition: Repetition) -> str | None:
    """repetition.share's variant, from the recorded decision of the per-round share
    (``penalty_costs``): "share" (above 0), "same", "not_slower", "undecided"; None untimed."""
    if repetition.timing is None:
        return None
    return COSTS[repetition.timing.penalty_costs]


def cost_in_runs(repetition: Repetition, chosen: str) -> bool:
    """repetition.share's check: the variant the raw runs give, recomputed from the rounds
    (each round's with / without, at the level of its looks), is the one written."""
    timing = repetition.timing
    with_runs = timing.with_penalty_runs_s
    without_runs = timing.without_penalty_runs_s
    level = look_level(timing.runs, timing.max_runs)
    ratio = ratio_interval(with_runs, without_runs, level)
    found = {"above": "share", "same": "same", "below": "not_slower", "undecided": "undecided"}
    return found[ratio_decision(ratio)] == chosen


def repetition_glance(repetition: Repetition) -> Glance:
    """## 반복 페널티's row: how the distinct answers move as the penalty grows ("more", "fewer",
    "same", "mixed"; "alone" for one penalty), the cost's verdict."""
    moved = distinct_trend(repetition)
    verdict = None if repetition.timing is None else repetition.timing.verdict
    return Glance(
        lesson=moved or "alone",
        verdict=verdict,
        terms=("repetition_penalty", "looping", "seed", "cv"),
    )


MOVED = {"more": "늘었다", "fewer": "줄었다", "same": "그대로였다", "mixed": "오르내렸다"}
# the penalties ascending, and a field of each in that order
ASCENDING = 'repetition.penalties|map("float")|sort'
IN_ORDER = (
    "{% for p in " + ASCENDING + " %}{{ repetition.penalties[p|string].FIELD }}"
    '{{ " → " if not loop.last }}{% endfor %}'
)
TIMING = "repetition.timing"
ROUNDS = "라운드 {{ repetition.timing.runs_done }}회"

# The section's sentences (mminfer.records.sentences): repetition.md.j2 asks for them; the one
# beside temp.json (repetition.off_matches_temp) is mminfer.report.joins's.
SENTENCES = (
    Sentence(
        "repetition.distinct_trend",
        holds=distinct_trend,
        words={
            word: (
                "repetition_penalty를 {{ " + ASCENDING + '|join(" → ")|particle("으로/로") }}'
                " 올리자 온도 {{ repetition.temperature }}에서 서로 다른 답이 샘플"
                " {{ repetition.samples }}개 중 "
                + IN_ORDER.replace("FIELD", "distinct")
                + "개로 "
                + verb
                + "."
            )
            for word, verb in MOVED.items()
        },
        check=distinct_in_counts,
    ),
    Sentence(
        "repetition.samples_never_loop",
        holds=samples_never_loop,
        words="샘플한 답은 어느 페널티에서도 반복하지 않았다: 반복은 greedy 이어 쓰기에서 보인다.",
    ),
    Sentence(
        "repetition.greedy_repeats_trend",
        holds=greedy_repeats_trend,
        words={
            word: (
                "greedy 이어 쓰기에서는 되풀이된 {{ repetition.loop_ngram }}-gram이 "
                + IN_ORDER.replace("FIELD", "greedy_repeated_ngrams")
                + "개로 "
                + verb
                + "."
            )
            for word, verb in MOVED.items()
        },
        check=greedy_repeats_in_counts,
    ),
    Sentence(
        "repetition.changes_answers",
        holds=changed_from_off,
        words={
            "changed": (
                "페널티는 행이 본 토큰의 로짓을 깎아 고르는 답을 바꾸는 장치이지, 캐시처럼"
                " 같은 답을 싸게 내는 장치가 아니다."
            ),
            "nothing": (
                "이 실행에서는 어느 페널티도 샘플한 답과 greedy를 1.0과 다르게 바꾸지 않았다."
            ),
        },
    ),
    Sentence(
        "repetition.share",
        holds=cost_of,
        words={
            "share": (
                "페널티의 몫은 전체 시간의 {{ " + TIMING + ".penalty_share_interval|percent_in }}다"
                "(라운드마다 짝지은 (페널티 − 없음) ÷ 페널티의 중앙값, " + ROUNDS + ")."
            ),
            "same": (
                "페널티가 있든 없든 시간이 잡음 문턱(5 %) 안에서 같았다: 몫은"
                " {{ " + TIMING + ".penalty_share_interval|percent_in }}다(" + ROUNDS + ")."
            ),
            "not_slower": (
                "**이 시간은 믿으면 안 된다**: 일을 더 하는 페널티 쪽이 "
                + ROUNDS
                + "에서 더 빨랐다"
                "(몫 {{ " + TIMING + ".penalty_share_interval|percent_in }}): 같은 때 돈 다른 일을"
                " 먼저 의심할 것."
            ),
            "undecided": (
                ROUNDS + "로는 페널티의 몫을 가를 수 없다: 라운드마다 짝지은 몫이"
                " {{ " + TIMING + ".penalty_share_interval|percent_in }}로 0을 사이에 둔다."
            ),
        },
        check=cost_in_runs,
    ),
    Sentence(
        "repetition.glance_cost",
        holds=cost_of,
        words={
            "share": "비용 {{ " + TIMING + ".penalty_share_interval|percent_in }}",
            "same": "비용: 잡음 문턱 안",
            "not_slower": "비용: 믿을 수 없음",
            "undecided": "비용: 라운드로 가를 수 없음",
        },
        check=cost_in_runs,
    ),
)
