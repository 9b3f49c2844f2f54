"""repetition.json: what the repetition penalty changes and costs. Its record and the facts its
report section reads.

Pure Python, no torch: the report reads the record without the model code.
"""

from __future__ import annotations

from dataclasses import dataclass

from mminfer.records import Answer, ChatPrompt, PretrainPrompt, RunInfo
from mminfer.records.interval import (
    Interval,
)
from mminfer.records.machine import TimedOn


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
