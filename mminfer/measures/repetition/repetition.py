"""repetition.json: what the repetition penalty changes and costs. Its record and the facts its
report section reads.

Pure Python, no torch: the report reads the record without the model code.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from mminfer.records import Answer, ChatPrompt, Glance, PretrainPrompt, RunInfo
from mminfer.records.claims import Claim, claim
from mminfer.records.machine import Contention


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
class PenaltyTiming:
    """What the penalty costs: the whole sampled generation with it and without, interleaved."""

    penalty: float
    rows: int  # the samples, one row each: the penalty's loop visits every row every step
    steps: int  # every step runs (no eos), so both sides do the same steps
    tokens_seen: int  # prompt + steps: the most tokens a row's penalty looks at
    with_penalty_s: float  # median
    without_penalty_s: float  # median
    per_step_with_penalty_s: float
    per_step_without_penalty_s: float
    penalty_share: float  # (with - without) / with: the penalty's share of the whole
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
    threads: int
    cpu_count: int | None
    load_before: list[float] | None
    load_after: list[float] | None
    contention: Contention | None  # during the timed rounds (mminfer.records.machine)


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
        "distinct_trend": trend(counts) if len(counts) > 1 else None,
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
        "claims": answer_claims(repetition, ascending)
        | loop_claims(repetition, ascending)
        | cost_claims(timing),
    }


def answer_claims(repetition: Repetition, ascending: list[str]) -> dict[str, Claim]:
    """The lesson's claims on the answers.

    ``distinct_trend``: the distinct answers, penalties ascending, move as ``trend`` says ("늘었다"
    never down and up somewhere, ...); ``changes_answers``: some penalty's sampled answers or
    greedy ids differ from penalty 1.0's; ``changed_nothing``: none does. Penalty 1.0's against
    temp.json's (``off_matches_temp``, ``off_differs``) are the report's join.
    """
    penalties = repetition.penalties
    counts = [penalties[name].distinct for name in ascending]
    off = penalties.get("1.0")
    changed = []
    if off is not None:
        for name in ascending:
            penalty = penalties[name]
            answers = [(a.answer, a.count) for a in penalty.answers]
            off_answers = [(a.answer, a.count) for a in off.answers]
            if answers != off_answers or penalty.greedy_ids != off.greedy_ids:
                changed.append(name)
    return {
        "distinct_trend": claim(
            "repetition.distinct_trend",
            len(counts) > 1,
            ascending=ascending,
            counts=counts,
            trend=trend(counts),
        ),
        "changes_answers": claim(
            "repetition.changes_answers",
            bool(changed),
            changed=changed,
        ),
        "changed_nothing": claim(
            "repetition.changed_nothing",
            off is not None and len(penalties) > 1 and not changed,
        ),
    }


def loop_claims(repetition: Repetition, ascending: list[str]) -> dict[str, Claim]:
    """Where the loops show: ``samples_never_loop`` (no sampled answer loops at any penalty) and
    ``greedy_repeats_trend`` (greedy's repeated n-grams, penalties ascending, move as ``trend``
    says; the lesson names them as the penalty rises)."""
    penalties = repetition.penalties
    repeats = [penalties[name].greedy_repeated_ngrams for name in ascending]
    return {
        "samples_never_loop": claim(
            "repetition.samples_never_loop",
            all(penalty.looping == 0 for penalty in penalties.values()),
            samples=repetition.samples,
        ),
        "greedy_repeats_trend": claim(
            "repetition.greedy_repeats_trend",
            len(repeats) > 1,
            ascending=ascending,
            repeats=repeats,
            trend=trend(repeats),
            n=repetition.loop_ngram,
        ),
    }


def cost_claims(timing: PenaltyTiming | None) -> dict[str, Claim]:
    """The cost's sentence, one of three: ``share`` (the penalty's share of the whole, measured:
    the verdict ok), ``share_estimate`` (the same share from spreads over noisy_cv: an estimate)
    and ``not_slower`` (the penalty side not slower: untrusted)."""
    if timing is None:
        return {}
    slower = timing.with_penalty_s > timing.without_penalty_s
    spread = max(timing.cv_with_penalty, timing.cv_without_penalty)
    return {
        "share": claim(
            "repetition.share",
            timing.verdict == "ok" and slower,
            share=timing.penalty_share,
        ),
        "share_estimate": claim(
            "repetition.share_estimate",
            timing.verdict == "noisy" and slower and spread > timing.noisy_cv,
            share=timing.penalty_share,
            cv=spread,
            noisy_cv=timing.noisy_cv,
        ),
        "not_slower": claim(
            "repetition.not_slower",
            not slower,
        ),
    }


def repetition_glance(repetition: Repetition) -> Glance:
    """## 반복 페널티's row: how the distinct answers move as the penalty grows ("more", "fewer",
    "same", "mixed"; "alone" for one penalty), the cost's verdict."""
    moved = repetition_facts(repetition)["distinct_trend"]
    verdict = None if repetition.timing is None else repetition.timing.verdict
    return Glance(
        lesson=moved or "alone",
        verdict=verdict,
        terms=("repetition_penalty", "looping", "cv"),
    )
