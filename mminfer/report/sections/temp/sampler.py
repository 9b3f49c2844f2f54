"""## 온도's sampler check: sampler.json's facts (the sampler is not the cache)."""

from __future__ import annotations

from mminfer.measures.temp.sampler import SamplerCheck


def sampler_facts(sampler: SamplerCheck) -> dict:
    """sampler.json and the table's complements: the samples that differed, the ones the second
    seed left the same."""
    return vars(sampler) | {
        "differing": sampler.samples - sampler.identical_with_and_without_cache,
        "same_with_second_seed": sampler.samples - sampler.differ_with_second_seed,
    }
