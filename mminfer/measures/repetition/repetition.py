"""repetition.json: what the repetition penalty changes and costs. Its record and the facts its
report section reads.

Pure Python, no torch: the report reads the record without the model code.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from mminfer.records import Answer, ChatPrompt, PretrainPrompt, RunInfo
from mminfer.records.interval import (
    Interval,
    look_level,
    ratio_decision,
    ratio_interval,
)
from mminfer.records.machine import TimedOn
from mminfer.records.moves import both_ways, never_down_some_up, never_moved, never_up_some_down


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
