"""temp.json: distinct answers of the SFT model per temperature. Its record and facts.

temp.json's keys are values: it maps each temperature ("0.3") to a :class:`TemperatureSummary`, and
its record is that mapping (:data:`Temperatures`).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mminfer.records import Answer, ChatPrompt, Glance, RunInfo
from mminfer.records.claims import Claim, claim

if TYPE_CHECKING:
    from mminfer.measures.temp.sampler import SamplerCheck


@dataclass
class TemperatureSummary:
    """One temperature of temp.json: how many of the sampled answers differ."""

    distinct: int
    samples: int
    top_share: float  # the most common answer's share
    distinct_1: float  # distinct characters over all characters of the answers
    distinct_2: float  # distinct character bigrams over all bigrams
    answers: list[Answer]  # most common first
    ids_past_tokenizer: int  # the answers' ids at or past the tokenizer's end, shown as ⟨id N⟩
    prompt: ChatPrompt
    run: RunInfo


Temperatures = dict[str, TemperatureSummary]  # temp.json: "0.3" -> its summary, lowest first


def temp_facts(temp: Temperatures) -> dict:
    first = next(iter(temp.values()))
    distinct = [summary.distinct for summary in temp.values()]
    return {
        "question": first.prompt.question,
        "template": first.prompt.template,
        "tokenizers_template": first.prompt.template == "tokenizer_config.json",
        "seed": first.prompt.seed,
        "samples": first.samples,
        "by_temperature": temp,
        "distinct_grows": all(a < b for a, b in itertools.pairwise(distinct)),
        "trend": trend(distinct),
        "distinct": distinct,
        "ids_past_tokenizer": sum(summary.ids_past_tokenizer for summary in temp.values()),
        "claims": temp_claims(temp),
    }


def temp_claims(temp: Temperatures) -> dict[str, Claim]:
    """The lesson's claims: ``trend`` (the distinct answers, temperatures ascending, move as its
    word says: see :func:`trend`) and ``distinct_grows`` (more at every step up: the sentence on
    why a higher temperature spreads the answers)."""
    distinct = [summary.distinct for summary in temp.values()]
    return {
        "trend": claim(
            "temp.trend",
            len(distinct) > 1,
            temperatures=list(temp),
            counts=distinct,
            trend=trend(distinct),
        ),
        "distinct_grows": claim(
            "temp.distinct_grows",
            len(distinct) > 1 and all(a < b for a, b in itertools.pairwise(distinct)),
        ),
    }


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


def temp_glance(temp: Temperatures, sampler: SamplerCheck | None = None) -> Glance:
    """## 온도's row: distinct answers per temperature; the lesson is their trend (see trend)."""
    lesson = temp_facts(temp)["trend"]
    return Glance(lesson=lesson, terms=("distinct", "distinct_2", "seed"))
