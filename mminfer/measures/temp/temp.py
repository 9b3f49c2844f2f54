"""temp.json: distinct answers of the SFT model per temperature. Its record and facts.

temp.json's keys are values: it maps each temperature ("0.3") to a :class:`TemperatureSummary`, and
its record is that mapping (:data:`Temperatures`).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mminfer.records import Answer, ChatPrompt, Glance, RunInfo
from mminfer.records.moves import (
    both_ways,
    down_every_step,
    moves,
    never_down_some_up,
    never_moved,
    never_up_some_down,
    up_every_step,
)
from mminfer.records.sentences import Sentence

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


def distinct_counts(temp: Temperatures) -> list[int]:
    """The distinct answers per temperature, in temp.json's order (lowest first)."""
    return [summary.distinct for summary in temp.values()]


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


def trend_in_counts(temp: Temperatures, chosen: str) -> bool:
    """temp.trend's and temp.lesson's check: the distinct counts the sentence prints, the
    temperatures taken in ascending order of their values, move as the variant says, by the signs
    of their steps (mminfer.records.moves), apart from :func:`trend`."""
    counts = [temp[key].distinct for key in sorted(temp, key=float)]
    said = {
        "grows": up_every_step(counts),
        "shrinks": down_every_step(counts),
        "flat": never_moved(counts),
        "rises": never_down_some_up(counts) and 0 in moves(counts),
        "falls": never_up_some_down(counts) and 0 in moves(counts),
        "mixed": both_ways(counts),
        "one": len(counts) == 1,
    }
    return said[chosen]


def temp_glance(temp: Temperatures, sampler: SamplerCheck | None = None) -> Glance:
    """## 온도's row: distinct answers per temperature; its lesson the sentence temp.lesson's
    variant (their trend, see :func:`distinct_trend`)."""
    return Glance(lesson=distinct_trend(temp), terms=("distinct", "distinct_2", "seed"))


TREND_WORDS = {  # temp.trend's verb per trend
    "grows": "늘었다",
    "shrinks": "줄었다",
    "flat": "그대로였다",
    "rises": "줄지 않고 늘거나 그대로였다",
    "falls": "늘지 않고 줄거나 그대로였다",
    "mixed": "늘었다 줄었다 했다",
}
# temp.trend's figures, from the record: the temperatures, the samples, the distinct counts
TEMPERATURES = '{{ temp.keys()|join(" → ") }}'
SAMPLES = "{{ (temp.values()|first).samples }}"
COUNTS = 'temp.values()|map(attribute="distinct")|join(" → ")'
RAISED = "온도를 " + TEMPERATURES + "로 올리자 서로 다른 답(distinct)이 " + SAMPLES + "개 중 "

# The section's sentences (mminfer.records.sentences): temp.md.j2 asks say("temp.trend") and
# say("temp.distinct_grows") under the heading and say("temp.lesson") in its row of ## 한눈에.
SENTENCES = (
    Sentence(
        "temp.trend",
        holds=distinct_trend,
        words={
            **{
                word: RAISED + "{{ " + COUNTS + '|particle("으로/로") }} ' + verb + "."
                for word, verb in TREND_WORDS.items()
            },
            "one": (
                "온도 " + TEMPERATURES + "에서 서로 다른 답(distinct)은 " + SAMPLES + "개 중 "
                "{{ " + COUNTS + " }}개였다."
            ),
        },
        check=trend_in_counts,
    ),
    Sentence(
        "temp.distinct_grows",
        holds=distinct_grows,
        words="온도는 로짓을 나누므로 높을수록 분포가 평평해져 드문 토큰이 더 자주 뽑힌다.",
    ),
    Sentence(
        "temp.lesson",
        holds=distinct_trend,
        words={
            "grows": "온도가 높을수록 답이 갈라진다",
            "shrinks": "온도를 올리자 오히려 답이 모였다: 표를 볼 것",
            "flat": "이 모델에서는 온도가 답의 수를 바꾸지 않았다",
            "rises": "온도를 올려도 답의 수가 줄지는 않았다",
            "falls": "온도를 올려도 답의 수가 늘지는 않았다",
            "mixed": "답의 수가 온도와 한 방향으로 움직이지 않았다",
            "one": "온도마다 서로 다른 답의 수",
        },
        check=trend_in_counts,
    ),
)
