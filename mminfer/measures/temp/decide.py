"""What temp.json and sampler.json decide: the distinct answers' trend, the cache's samples.

Pure Python, no torch.
"""

from __future__ import annotations

import itertools

from mminfer.measures.temp.sampler import SamplerCheck
from mminfer.measures.temp.temp import Temperatures, distinct_counts


def distinct_trend(temp: Temperatures) -> str:
    """The distinct answers, temperatures ascending, move as :func:`trend`'s word says; "one"
    with a single temperature (nothing to compare)."""
    distinct = distinct_counts(temp)
    return trend(distinct) if len(distinct) > 1 else "one"


def distinct_grows(temp: Temperatures) -> bool:
    """More distinct answers at every step up: the sentence on why a higher temperature spreads
    the answers."""
    distinct = distinct_counts(temp)
    return len(distinct) > 1 and all(a < b for a, b in itertools.pairwise(distinct))


def trend(values: list) -> str:
    """Which way a row of values goes: "grows" (each above the one before), "shrinks" (each
    below), "flat" (all equal), "rises" (never below the one before, some equal), "falls" (never
    above, some equal) or "mixed" (up and down)."""
    pairs = list(itertools.pairwise(values))
    if all(a < b for a, b in pairs):
        return "grows"
    if all(a > b for a, b in pairs):
        return "shrinks"
    if all(a == b for a, b in pairs):
        return "flat"
    if all(a <= b for a, b in pairs):
        return "rises"  # never down, not always up
    if all(a >= b for a, b in pairs):
        return "falls"
    return "mixed"


def against_cache(sampler: SamplerCheck) -> str | None:
    """The samples with the cache against without, one seed: "seed_changes" (all the same, token
    for token, and the second seed changed some: the sampler, not the cache, decides),
    "seed_changes_nothing" (all the same, the second seed changed none), "differed_on_cpu" (some
    differed, the first difference named, in float32 on a CPU, where the two paths' rounding
    rarely parts a draw: suspect the cached path) or "differed" (some differed elsewhere:
    rounding can); None where the count and the first difference disagree."""
    identical = sampler.identical_with_and_without_cache
    if identical == sampler.samples and sampler.first_difference is None:
        return "seed_changes" if sampler.differ_with_second_seed > 0 else "seed_changes_nothing"
    if identical < sampler.samples and sampler.first_difference is not None:
        float32_on_cpu = sampler.run.dtype == "float32" and sampler.run.device == "cpu"
        return "differed_on_cpu" if float32_on_cpu else "differed"
    return None
