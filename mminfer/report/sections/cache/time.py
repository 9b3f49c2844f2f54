"""## KV 캐시's timing: time.json's facts, and its join with count.json.

The speedup and its spread are decided by time.json's decide.py (mminfer.measures.time.decide);
the reason line sets the time ratio against count.json's token ratio and the fixed cost per call
that time.json's narrow side bounds. Their words are in the section's templates (same.md.j2,
time.md.j2).
"""

from __future__ import annotations

from mminfer.measures.cache.count import Count
from mminfer.measures.time.time import Timing
from mminfer.records import token_ratio


def time_facts(time: Timing) -> dict:
    """time.json and its verdict (see mminfer.measures.time.measure): ok, noisy, or untrusted.

    Its own record only: the speedup against the token ratio (count.json) is this module's
    join."""
    return vars(time) | {
        "estimate": time.verdict == "noisy",  # the speedup is said as an estimate (≈)
        "trusted": time.verdict != "untrusted",
    }


def time_count_facts(time: Timing, count: Count) -> dict:
    """time.json's facts with the token ratio of count.json beside the speedup; the reason the
    two differ is time.json's own narrow side (decide.fixed_cost_said), timed in the same
    rounds."""
    return time_facts(time) | {"token_ratio": token_ratio(count)}
