"""## 온도: temp.json's facts, glance row and sentences (distinct answers per temperature)."""

from __future__ import annotations

from mminfer.measures.temp.decide import distinct_grows, distinct_trend
from mminfer.measures.temp.sampler import SamplerCheck
from mminfer.measures.temp.temp import COUNTS, TEMPERATURES, Temperatures, distinct_counts
from mminfer.records import Glance
from mminfer.records.sentences import Sentence, recomputed


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


SAMPLES = "{{ (temp.values()|first).samples }}"


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
        check=recomputed,
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
        check=recomputed,
    ),
)
