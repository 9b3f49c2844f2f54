"""## 서빙: serve.json's facts and glance row, and its joins with sweep.json."""

from __future__ import annotations

from mminfer.measures.serve import decide
from mminfer.measures.serve.serve import Serve
from mminfer.measures.sweep.sweep import Sweep
from mminfer.records import Glance
from mminfer.report.sections.serve import joins

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


def serve_sweep_facts(serve: Serve, sweep: Sweep | None = None) -> dict:
    """serve.json's facts (mminfer.measures.serve.serve.serve_facts) and its B = 1 prefill
    beside sweep.json's time to first token (:func:`prefill_against_sweep`)."""
    return serve_facts(serve) | {"prefill_against_sweep": joins.prefill_against_sweep(serve, sweep)}
