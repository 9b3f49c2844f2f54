"""serve.json: decode steps against the batch size, and the users one machine serves.

Its record and the facts its report section reads.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from mminfer.records import Glance, RunInfo, bands
from mminfer.records.claims import Claim, claim
from mminfer.records.machine import CacheLevel


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
    decode_step_s: float  # the median of every decode step of every pass
    decode_steps_s: list[float]  # every decode step, pass after pass
    prefills_s: list[float] | None  # each pass's prefill
    pass_step_s: list[float]  # each pass's median decode step
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
    run: RunInfo


SPREAD_DOUBTS = ("decode_spread", "prefill_spread")  # between the passes


def serve_facts(serve: Serve) -> dict:
    """serve.json: how far to trust the table, where tokens per second peak and stop growing,
    whether batching is nearly free or only still pays, the cliffs, which bound binds and why,
    and the batches whose decode steps fall in two bands. Its prefill beside sweep.json's is the
    report's join (mminfer.report.joins): ``prefill_against_sweep`` None here."""
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
    banded = []
    for row in rows:
        parts = bands(row.decode_steps_s)
        if parts is not None:
            banded.append({"batch": row.batch, "bands": parts})
    fit = serve.fit
    outside_fit = [row.batch for row in rows if row.batch > fit.fitted_batches[1]]
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
        "outside_fit": outside_fit,
        "cliff_rows": [(by_batch[c.from_batch], by_batch[c.to_batch], c) for c in serve.cliffs],
        "caches_known": bool(serve.caches),
        # batches below the peak whose tokens per second fell below the batch before's (a dip
        # on the way up; past the peak the drop is the peak's own story)
        "dips": [
            b.batch
            for a, b in itertools.pairwise(rows)
            if b.tokens_per_second < a.tokens_per_second and b.batch < serve.peak_batch
        ],
        "prefill_against_sweep": None,
        # batches whose decode steps (every pass's) fall in two bands (records.bands): their
        # median stands for neither; said with the load the run recorded, no cause named
        "banded": banded,
        # each user slower at the peak than in the smallest batch
        "per_user_falls": top.per_user_tokens_per_second < first.per_user_tokens_per_second,
        "growth": growth_claims(serve),
        "texts": text_claims(serve),
        "shape": shape_claims(serve),
        "spread": spread_claims(serve),
        "bound": bound_claims(serve),
        "contradicting": contradiction_claim(serve),
        "free": free_claim(serve),
        # "배치를 처음 키울 때부터 한 단계가 {nearly_free} 넘게 길어졌다"
        "not_free": claim(
            "serve.first_step_up_costly",
            len(rows) > 1
            and rows[1].decode_step_s > rows[0].decode_step_s * (1 + serve.nearly_free),
            share=serve.nearly_free,
        ),
    }


def text_claims(serve: Serve) -> dict:
    """The fit's range, the cliffs' likely cause, the experts, the two bands and the context
    caveat, each as the claim of its sentence's words.

    ``fit_range``: every batch of the fitted range within holds_within of the line;
    ``cliff_caches``: per cliff, every level named lies between the step's bytes before and
    after (and one is named); ``experts_grow`` / ``experts_same``: the experts a step touches at
    the largest batch against the smallest; ``two_bands``: the batches whose decode steps part
    into two bands (records.bands); ``context_beyond``: the users' context past the one measured.
    """
    rows = serve.batches
    fit = serve.fit
    fitted = [row for row in rows if fit.fitted_batches[0] <= row.batch <= fit.fitted_batches[1]]
    errors = []
    for row in fitted:
        line = fit.fixed_s + fit.per_sequence_s * row.batch
        errors.append(abs(line - row.decode_step_s) / row.decode_step_s)
    within = bool(errors) and max(errors) <= fit.holds_within and len(fitted) >= fit.least_batches
    cliff_caches = []
    for cliff in serve.cliffs:
        between = all(
            cliff.step_bytes_before < level.bytes <= cliff.step_bytes_after
            for level in cliff.crossed
        )
        cliff_caches.append(
            claim(
                "serve.cliff_cache",
                cliff.likely_cause == "cache" and bool(cliff.crossed) and between,
                from_batch=cliff.from_batch,
                to_batch=cliff.to_batch,
                levels=[level.name for level in cliff.crossed],
            )
        )
    experts = [row.experts_touched for row in rows if row.experts_touched is not None]
    complete = bool(experts) and len(experts) == len(rows)
    about_experts = {
        "first": experts[0] if experts else None,
        "last": experts[-1] if experts else None,
    }
    banded = []
    for row in rows:
        parts = bands(row.decode_steps_s)
        if parts is not None:
            banded.append({"batch": row.batch, "bands": parts})
    return {
        "fit_range": claim(
            "serve.fit_within",
            fit.holds and within,
            batches=list(fit.fitted_batches),
            within=fit.holds_within,
        ),
        "cliff_caches": cliff_caches,
        "experts_grow": claim(
            "serve.experts_grow",
            complete and experts[-1] > experts[0],
            **about_experts,
        ),
        "experts_same": claim(
            "serve.experts_same",
            complete and experts[-1] == experts[0],
            **about_experts,
        ),
        "two_bands": claim("serve.two_bands", bool(banded), banded=banded),
        "context_beyond": claim(
            "serve.context_beyond_measured",
            serve.users.context > serve.decode_context,
            context=serve.users.context,
            measured=serve.decode_context,
        ),
    }


def contradiction_claim(serve: Serve) -> Claim:
    """ "B = ...에서 더 큰 배치가 더 빨랐다": the untrusted batches, each faster (its decode step
    or its prefill) than the next smaller batch."""
    rows = serve.batches
    named = [row.batch for row in rows if row.verdict == "untrusted"]
    faster = []
    for before, after in itertools.pairwise(rows):
        step_faster = after.decode_step_s < before.decode_step_s
        prefill_faster = (
            after.prefill_s is not None
            and before.prefill_s is not None
            and after.prefill_s < before.prefill_s
        )
        if step_faster or prefill_faster:
            faster.append(after.batch)
    holds = bool(named) and all(batch in faster for batch in named)
    return claim("serve.larger_faster", holds, batches=named)


def free_claim(serve: Serve) -> Claim:
    """ "B = X까지 ... 한 단계가 {nearly_free} 넘게 길어지지 않은 것은": every step up to X made
    the decode step at most that much longer, and the next one (if any) more."""
    rows = serve.batches
    reached = serve.nearly_free_up_to
    within = True
    stopped = True
    for before, after in itertools.pairwise(rows):
        longer = after.decode_step_s > before.decode_step_s * (1 + serve.nearly_free)
        if after.batch <= reached:
            within &= not longer
        elif before.batch == reached:
            stopped = longer
    return claim(
        "serve.nearly_free_up_to",
        within and stopped and reached > rows[0].batch,
        batch=reached,
        share=serve.nearly_free,
    )


def shape_claims(serve: Serve) -> dict[str, Claim]:
    """The lesson's relations: the peak (the most tokens per second, at the smallest batch or at
    ``batch``), the batches below it that fell from the one before (``dips``), and each user's
    speed at the peak against the smallest batch's (falls or rises)."""
    rows = serve.batches
    by_batch = {row.batch: row for row in rows}
    first, top = rows[0], by_batch[serve.peak_batch]
    dips = [
        b.batch
        for a, b in itertools.pairwise(rows)
        if b.tokens_per_second < a.tokens_per_second and b.batch < serve.peak_batch
    ]
    falls = top.per_user_tokens_per_second < first.per_user_tokens_per_second
    users = {"first": first.batch, "peak": top.batch}
    return {
        "peak_first": claim("serve.peak_at_first", top.batch == first.batch, batch=first.batch),
        "peak": claim("serve.peak_at", top.batch != first.batch, batch=top.batch),
        "dips": claim("serve.dips", bool(dips), batches=dips),
        "per_user_falls": claim("serve.per_user_falls", falls, **users),
        "per_user_rises": claim(
            "serve.per_user_rises",
            top.per_user_tokens_per_second > first.per_user_tokens_per_second,
            **users,
        ),
    }


def spread_claims(serve: Serve) -> dict[str, Claim]:
    """Which batches' spreads passed the threshold, each spread named: the passes' median decode
    steps (``decode``), the passes' prefills (``prefill``), the steps within a pass
    (``within``)."""
    decode = [row.batch for row in serve.batches if "decode_spread" in row.doubts]
    prefill = [row.batch for row in serve.batches if "prefill_spread" in row.doubts]
    within = [row.batch for row in serve.batches if "decode_spread_within_passes" in row.doubts]
    return {
        "decode": claim(
            "serve.decode_spread_over", bool(decode), batches=decode, threshold=serve.noisy_cv
        ),
        "prefill": claim(
            "serve.prefill_spread_over", bool(prefill), batches=prefill, threshold=serve.noisy_cv
        ),
        "within": claim(
            "serve.within_spread_over",
            bool(within),
            batches=within,
            threshold=serve.step_noisy_cv,
        ),
    }


def bound_claims(serve: Serve) -> dict[str, Claim]:
    """Which bound binds, and how firm the speed bound is.

    ``memory``: fewer users by memory than by speed; ``speed``: no more by speed than by memory
    (or memory unknown) and some batch measured missed the target; ``firm``: the speed bound is
    the largest measured batch whose slowest pass met the target, the next one's fastest pass
    missing it; ``estimate``: a bound between measured batches where a pass range straddles the
    target, or the fit's (``over_by_s``: how far the next batch's median missed it, ``cv`` its
    passes' spread)."""
    users = serve.users
    by_batch = {row.batch: row for row in serve.batches}
    target = users.step_target_s
    memory = users.users_by_memory
    by_speed = users.users_by_speed
    missed = any(row.decode_step_s > target for row in serve.batches)
    firm = False
    estimate = False
    about = {"users": by_speed, "target_s": target}
    between = users.speed_between or []
    if all(batch in by_batch for batch in between) and users.speed_how in ("measured", "fit"):
        under, over = (by_batch[batch] for batch in users.speed_between)
        firm = (
            users.speed_how == "measured"
            and over.step_low_s > target
            and under.step_high_s <= target
        )
        estimate = not firm
        about |= {
            "under": under.batch,
            "over": over.batch,
            "over_by_s": over.decode_step_s - target,
            "cv": over.cv_decode_step,
            "fitted": users.speed_how == "fit",
        }
    return {
        "memory": claim(
            "serve.memory_binds", memory is not None and memory < by_speed, memory=memory
        ),
        "speed": claim(
            "serve.speed_binds",
            missed and (memory is None or by_speed <= memory),
            users=by_speed,
        ),
        "none": claim(
            "serve.no_bound_reached",
            not missed and not (memory is not None and memory < by_speed),
            users=by_speed,
        ),
        "firm": claim("serve.speed_bound_firm", firm, **about),
        "estimate": claim("serve.speed_bound_estimate", estimate, **about),
    }


def doubling_gains(rows: list[BatchStep]) -> list[tuple[int, int, float]]:
    """Each step up the measured batches: (from, to, the growth of tokens per second per doubling
    of the batch)."""
    gains = []
    for before, after in itertools.pairwise(rows):
        doublings = math.log2(after.batch / before.batch)
        ratio = after.tokens_per_second / before.tokens_per_second
        gains.append((before.batch, after.batch, ratio ** (1 / doublings) - 1))
    return gains


def growth_claims(serve: Serve) -> dict[str, Claim]:
    """How tokens per second grow as the batch doubles, each sentence checked on every step up.

    ``every_doubling_grew``: every step up gained more than serve.growth_per_doubling;
    ``stops_from``: from ``batch`` on, no step up gained that much (``batch`` the smallest such,
    below the largest measured); ``mixed``: neither (it grew so at some steps and not at others
    before the last), naming the steps up that did not grow so.
    """
    rows = serve.batches
    growth = serve.growth_per_doubling
    gains = doubling_gains(rows)
    grew = [gain > growth for _, _, gain in gains]
    stops_from = rows[-1].batch
    for (before, _, _), grew_here in reversed(list(zip(gains, grew))):
        if grew_here:
            break
        stops_from = before
    stopped = stops_from < rows[-1].batch
    step_s = {row.batch: row.decode_step_s for row in rows}
    not_grown = [(before, after) for (before, after, _), up in zip(gains, grew) if not up]
    return {
        "every_doubling_grew": claim(
            "serve.every_doubling_grew",
            bool(gains) and all(grew),
            last=rows[-1].batch,
            growth=growth,
        ),
        "stops_from": claim(
            "serve.growth_stops_from",
            stopped,
            batch=stops_from,
            growth=growth,
            step_s=step_s[stops_from],
        ),
        "mixed": claim(
            "serve.growth_mixed",
            bool(gains) and any(grew) and not all(grew) and not stopped,
            not_grown=not_grown,
            growth=growth,
        ),
    }


def serve_glance(serve: Serve) -> Glance:
    """## 서빙's row: the peak throughput; the lesson is which bound binds ("speed", "memory",
    "not reached")."""
    return Glance(
        lesson=serve.users.binding,
        verdict=serve.verdict,
        terms=("prefill", "batch", "user", "throughput", "cliff", "bound"),
    )
