"""## KV 캐시's opening: same.json's facts and its glance row (the words: same.md.j2).

The section of the task's first four files (same.md.j2 here, count, time and kvbytes beside it):
whether greedy generation gives the same ids both ways and, where not, where they part and why.
The decisions over same.json's runs are its folder's (mminfer.measures.cache.decide); the glance
row reads time.json and count.json too (the section's joins).
"""

from __future__ import annotations

from mminfer.measures.cache.count import Count
from mminfer.measures.cache.decide import lesson, rounding_sized
from mminfer.measures.cache.same import Same
from mminfer.measures.time.decide import cache_faster, fixed_cost_said
from mminfer.measures.time.time import Timing
from mminfer.records import Glance, token_ratio


def same_facts(same: Same) -> dict:
    """same.json: the same ids? If not, where they part and whether rounding explains it."""
    return {
        "same_ids": same.same_ids,
        "prompt_len": same.prompt_len,
        "new_tokens": same.new_tokens,
        "max_abs_logit_diff": same.max_abs_logit_diff,
        "logits_equal": same.max_abs_logit_diff == 0,
        "first_difference": same.first_difference,
        "rounding_sized": rounding_sized(same),
        "run": same.run,
    }


def same_time_count_glance(same: Same, time: Timing, count: Count | None = None) -> Glance:
    """## KV 캐시's row: the task's three numbers (tokens, time, bytes) and what they teach.

    The lesson: decide.lesson over the ids and time.json's cache_faster. The row's numbers come
    from the sections' facts. Its terms: the token ratio, the speedup, the CV and the fixed cost
    the section states."""
    found = lesson(same, cache_faster(time), trusted=time.verdict != "untrusted")
    terms = ("token_ratio", "speedup", "cv")
    if count is not None and fixed_cost_said(time, token_ratio(count)) is not None:
        terms += ("fixed_cost",)
    return Glance(lesson=found, verdict=time.verdict, terms=terms)
