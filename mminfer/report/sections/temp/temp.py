"""## 온도: temp.json's facts and glance row (distinct answers per temperature)."""

from __future__ import annotations

from mminfer.measures.temp.decide import distinct_trend
from mminfer.measures.temp.sampler import SamplerCheck
from mminfer.measures.temp.temp import Temperatures, distinct_counts
from mminfer.records import Glance


def temp_facts(temp: Temperatures) -> dict:
    first = next(iter(temp.values()))
    return {
        "question": first.prompt.question,
        "template": first.prompt.template,
        "tokenizers_template": first.prompt.template == "tokenizer_config.json",
        "seed": first.prompt.seed,
        "samples": first.samples,
        "by_temperature": temp,
        "distinct": distinct_counts(temp),
        "ids_past_tokenizer": sum(summary.ids_past_tokenizer for summary in temp.values()),
    }


def temp_glance(temp: Temperatures, sampler: SamplerCheck | None = None) -> Glance:
    """## 온도's row: distinct answers per temperature; its lesson temp.distinct_trend's
    variant (their trend, see :func:`distinct_trend`)."""
    return Glance(lesson=distinct_trend(temp), terms=("distinct", "distinct_2", "seed"))
