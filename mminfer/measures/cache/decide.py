"""What same.json and count.json decide: the same ids, why they part, the counts against formulas.

Each function takes the record (and, for the glance, the figures it is set against, passed in:
time.json's decision) and returns a variant word; the report's sentences, the glance row and the
checker (mminfer.report.check) call them. Pure Python, no torch.
"""

from __future__ import annotations

from mminfer.measures.cache.count import Count
from mminfer.measures.cache.same import Same
from mminfer.records import within_rounding


def rounding_sized(same: Same) -> bool | None:
    """Where the ids part: whether the paths' rounding explains the step's margin (None: the same
    ids)."""
    if same.same_ids:
        return None
    difference = same.first_difference
    return within_rounding(difference.max_abs_logit_diff, difference.max_abs_logit, same.run.dtype)


def ids_compared(same: Same) -> str | None:
    """ "equal": the two paths' new ids, token for token; else where they part, "rounding" (the
    paths' rounding explains it) or "suspect" (it does not); None: no step to name."""
    if same.same_ids and same.ids == same.ids_without_cache:
        return "equal"
    if same.first_difference is None:
        return None
    return "rounding" if rounding_sized(same) else "suspect"


def paths_compared(same: Same) -> str | None:
    """The details' sentence: with the same ids, "bitwise" (the logits too) or "apart" (they
    differ; "apart_float32_cpu" where the run's own precision was float32 on the CPU: half
    precision or a GPU parts the paths by more rounding); else :func:`ids_compared`'s finding."""
    if not same.same_ids:
        return ids_compared(same)
    if same.max_abs_logit_diff == 0:
        return "bitwise"
    float32_cpu = same.run.dtype == "float32" and same.run.device == "cpu"
    return "apart_float32_cpu" if float32_cpu else "apart"


def counts_differ(count: Count) -> bool:
    """Either method's count is not its formula's value."""
    return (
        count.fed_with_cache != count.formula_with_cache
        or count.fed_without_cache != count.formula_without_cache
    )


def lesson(same: Same, cache_faster: str, trusted: bool) -> str:
    """KV cache glance lesson, from the ids and time.json's decision (its ``cache_faster``,
    and whether its time may be believed): "same_cheaper" (the same ids, the paired rounds decide
    the cache faster), "same_not_faster" (the same ids, the rounds decide the two the same),
    "same_untimed" (the same ids, the time untrusted or the rounds deciding no faster cache),
    "rounding" (the ids part where rounding explains it) or "suspect" (beyond rounding)."""
    if not same.same_ids:
        return "rounding" if rounding_sized(same) else "suspect"
    if trusted and cache_faster == "yes":
        return "same_cheaper"
    if trusted and cache_faster == "same":
        return "same_not_faster"
    return "same_untimed"
