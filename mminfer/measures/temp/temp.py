"""temp.json: distinct answers of the SFT model per temperature. Its record.

temp.json's keys are values: it maps each temperature ("0.3") to a :class:`TemperatureSummary`, and
its record is that mapping (:data:`Temperatures`).
"""

from __future__ import annotations

from dataclasses import dataclass

from mminfer.records import Answer, ChatPrompt, RunInfo


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


def distinct_counts(temp: Temperatures) -> list[int]:
    """The distinct answers per temperature, in temp.json's order (lowest first)."""
    return [summary.distinct for summary in temp.values()]


# temp.trend's figures, from the record: the temperatures, the samples, the distinct counts
TEMPERATURES = '{{ temp.keys()|join(" → ") }}'
COUNTS = 'temp.values()|map(attribute="distinct")|join(" → ")'
