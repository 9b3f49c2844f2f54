"""serve.json: decode steps against the batch size, and the users one machine serves.

Its record and its arithmetic; what it decides is mminfer.measures.serve.decide.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from mminfer.records import RunInfo
from mminfer.records.interval import (
    FAMILY_LEVEL,
    Interval,
    ratio_interval,
)
from mminfer.records.machine import CacheLevel, Contention


@dataclass
class BatchStep:
    """One batch size: the task prompt decoded ``batch`` times together, with the cache.

    Clocked in every pass of serve.passes (the passes interleaved across the batch sizes): the
    spread is over the passes, and the verdict is the time job's rule
    (mminfer.records.spread.verdict_of).
    """

    batch: int
    prefill_s: float | None  # batch x prompt tokens at once (median of the passes); None past
    # serve.prefill_up_to
    decode_step_s: float  # the median of the passes' medians (decode_step_interval's median)
    decode_steps_s: list[float]  # every decode step, pass after pass
    prefills_s: list[float] | None  # each pass's prefill
    pass_step_s: list[float]  # each pass's median decode step: the raw runs, paired by pass
    decode_step_interval: Interval  # the passes' median steps: median and interval (one look at
    # FAMILY_LEVEL, mminfer.records.interval)
    prefill_interval: Interval | None  # the passes' prefills; None past serve.prefill_up_to
    step_low_s: float  # the fastest pass's median step
    step_high_s: float  # the slowest pass's median step
    cv_decode_step: float  # coefficient of variation of the passes' median steps
    cv_within_passes: float  # the steps' spread within a pass around their trend (median)
    cv_prefill: float | None  # of the passes' prefills
    # see mminfer.measures.serve.measure.batch_doubts: each spread (of the passes, of the steps
    # within them around
    # their trend) judged against Serve.step_noisy_cv
    doubts: list[str]
    verdict: str  # "ok", "noisy" or "untrusted"
    tokens_per_second: float  # batch / decode_step_s: the machine's
    per_user_tokens_per_second: float  # 1 / decode_step_s: each user's
    kv_bytes: int  # measured: the byte sum of the batch's cache
    # the formula: 2 x layers x batch x (prompt + decode steps) x KV heads x head_dim x bytes
    formula_kv_bytes: int
    kv_bytes_match: bool
    experts_touched: float | None  # MoE: distinct experts per layer in a decode step (median)


@dataclass
class ServeFit:
    """The decode step against the batch: step(B) = fixed + per_sequence x B.

    Fitted in relative error (every batch counts alike, not only the slowest) over the batches
    from the smallest up to the largest where the line holds (``fitted_batches``).
    """

    model: str
    method: str
    fixed_s: float
    per_sequence_s: float
    held_at_zero: list[str]
    median_relative_residual: float  # over fitted_batches
    holds: bool  # every batch of fitted_batches within holds_within, and least_batches
    holds_within: float  # the relative error every batch of a range must keep (serve.HOLDS_WITHIN)
    least_batches: int  # batches a range needs to claim the line holds (two fit any line)
    measured_batches: list[int]  # the smallest and largest
    fitted_batches: list[int]  # the smallest and largest of the range the fit claims
    relative_residuals: list[float]  # |fit - measured| / measured at every measured batch
    crossover_batch: float | None  # fixed / per_sequence: past it, the batch's own work dominates


@dataclass
class Cliff:
    """Two consecutive batch sizes between which the decode step grew faster than the batch.

    Beside it, the memory a decode step reads: every weight once, and the batch's KV cache as
    stored; and the device's caches whose size lies between the step's memory at the two batches:
    where one does, the step's memory outgrew that cache, the likely cause; where none does, this
    comparison names no cause. The KV cache as attention sees it after repeat_kv is context only.
    """

    from_batch: int
    to_batch: int
    batch_ratio: float
    step_ratio: float  # the larger batch's decode step / the smaller one's
    weight_bytes: int  # every parameter in memory, read once a step
    kv_bytes_before: int
    kv_bytes_after: int
    attention_kv_bytes_before: int  # after repeat_kv: x heads / KV heads (context, decides nothing)
    attention_kv_bytes_after: int
    step_bytes_before: int  # weight_bytes + kv_bytes_before
    step_bytes_after: int
    crossed: list[CacheLevel]  # whose size lies between step_bytes_before and step_bytes_after
    # "cache" (a level lies between), "spread" (either batch's verdict is not ok: the cliff may be
    # the machine's noise; no cause named) or "unknown" (no level lies between)
    likely_cause: str


@dataclass
class UsersBound:
    """How many users this device takes at a per-user decode speed and context."""

    tokens_per_second: float  # each user's target
    step_target_s: float  # 1 / tokens_per_second
    context: int
    users_by_speed: int
    speed_how: str  # "measured", "fit", "lower bound" or "too slow" (see serve.users_by_speed)
    speed_between: list[int] | None  # the measured batches either side of the target
    kv_bytes_per_token: int
    free_bytes: int | None  # of this device, now (the weights are loaded)
    free_source: str
    users_by_memory: int | None
    memory_formula: str
    binding: str  # "speed", "memory", or "not reached" (the speed held at every measured batch)


@dataclass
class Serve:
    """serve.json: decode steps against the batch size, and the users one machine serves."""

    prompt_len: int
    decode_steps: int
    warmup: int
    prefill_up_to: int  # batches up to this size also clock their prefill
    decode_context: int  # the tokens in each user's cache by the last decode step clocked
    context_asked: int  # serve.context; users.context is it, capped at the model's positions
    batches_planned: list[int]
    memory_cap_gib: float
    left_out_by_cap: list[int]  # batches whose cache would pass serve.memory_cap_gib
    threads: int
    load_before: list[float] | None
    load_after: list[float] | None
    passes: int  # every batch clocked once per pass
    order: str
    noisy_cv: float  # the threshold of the passes' spread
    step_noisy_cv: float  # the threshold of the steps' spread within a pass (spread.STEP_NOISY_CV)
    clock: str  # the clock the runs were read by: "perf_counter", or the tests' jitter
    doubts: list[str]  # every batch's doubts together
    verdict: str  # the table's: "ok", "noisy" or "untrusted" (mminfer.records.spread.verdict_of)
    batches: list[BatchStep]
    fit: ServeFit
    nearly_free: float
    nearly_free_up_to: int  # the largest batch reached while each doubling stayed nearly free
    peak_batch: int  # the batch with the most tokens per second
    peak_tokens_per_second: float
    peak_gain: float  # peak tokens per second / the smallest batch's
    growth_per_doubling: float  # serve.growth_per_doubling
    growth_stops_at: int  # from this batch on, no doubling raised tokens per second by that much
    growth_stops_within: bool  # False: it still grew so at the largest batch measured
    growth_stops_step_s: float  # the decode step at growth_stops_at
    cliffs: list[Cliff]
    caches: list[CacheLevel]
    caches_source: str
    users: UsersBound
    contention: Contention | None  # during the timed passes (mminfer.records.machine)
    run: RunInfo

    # The sentences' figures, from the passes (paired: every pass visits every batch).

    def row(self, batch: int) -> BatchStep:
        return next(row for row in self.batches if row.batch == batch)

    def peak_gain_interval(self) -> Interval:
        """Tokens per second at the peak over the smallest batch's, pass by pass."""
        return tokens_ratio(self.row(self.peak_batch), self.batches[0])

    def per_user_interval(self) -> Interval:
        """The decode step at the peak over the smallest batch's, pass by pass: above 1, each
        user is slower at the peak."""
        return ratio_interval(self.row(self.peak_batch).pass_step_s, self.batches[0].pass_step_s)

    def steps_up(self) -> list[tuple[BatchStep, BatchStep]]:
        """Each batch beside the next larger: every step up the sentences test together."""
        return list(itertools.pairwise(self.batches))

    def cliff_interval(self, cliff: Cliff) -> Interval:
        """A cliff's decode step after over before, pass by pass."""
        return ratio_interval(
            self.row(cliff.to_batch).pass_step_s, self.row(cliff.from_batch).pass_step_s
        )


def tokens_ratio(after: BatchStep, before: BatchStep, level: float = FAMILY_LEVEL) -> Interval:
    """Tokens per second at ``after`` over ``before``, pass by pass (one look at FAMILY_LEVEL)."""
    rates_after = [after.batch / step for step in after.pass_step_s]
    rates_before = [before.batch / step for step in before.pass_step_s]
    return ratio_interval(rates_after, rates_before, level)
