"""## 반복 페널티: repetition.json's facts and glance row, beside temp.json."""

from __future__ import annotations

from mminfer.measures.repetition import decide
from mminfer.measures.repetition.repetition import Repetition
from mminfer.measures.temp.temp import Temperatures
from mminfer.records import Glance


def repetition_facts(repetition: Repetition) -> dict:
    """repetition.json's facts: each penalty's answers and greedy, how the distinct answers move
    as the penalty grows (penalties in ascending order), the cost. Whether 1.0 drew temp.json's
    counts at that temperature is this module's join: ``matches_temp`` and
    ``temp_distinct`` None here.
    """
    key = repr(float(repetition.temperature))
    off = repetition.penalties.get("1.0")
    ascending = sorted(repetition.penalties, key=float)
    counts = [repetition.penalties[name].distinct for name in ascending]
    greedy_left = [
        name
        for name, penalty in repetition.penalties.items()
        if penalty.greedy_first_divergence is not None
    ]
    timing = repetition.timing
    return {
        "ids_past_tokenizer": sum(p.ids_past_tokenizer for p in repetition.penalties.values()),
        "ascending": ascending,
        "counts": counts,
        "temperature": key,
        "samples": repetition.samples,
        "new_tokens": repetition.new_tokens,
        "seed": repetition.seed,
        "loop_ngram": repetition.loop_ngram,
        "greedy_new_tokens": repetition.greedy_new_tokens,
        "greedy_prompt_len": repetition.greedy_prompt.prompt_tokens + 1,
        "penalties": repetition.penalties,
        "off": off,
        "matches_temp": None,
        "temp_distinct": None,
        "greedy_left": greedy_left,
        "timing": timing,
        "lora": repetition.run.lora is not None,
        "dtype": repetition.run.dtype,
        "device": repetition.run.device,
    }


def repetition_glance(repetition: Repetition) -> Glance:
    """## 반복 페널티's row: how the distinct answers move as the penalty grows ("more", "fewer",
    "same", "mixed"; "alone" for one penalty), the cost's verdict."""
    moved = decide.distinct_trend(repetition)
    verdict = None if repetition.timing is None else repetition.timing.verdict
    return Glance(
        lesson=moved or "alone",
        verdict=verdict,
        terms=("repetition_penalty", "looping", "seed", "cv"),
    )


def repetition_temp_facts(repetition: Repetition, temp: Temperatures | None = None) -> dict:
    """repetition.json's facts (mminfer.measures.repetition.repetition.repetition_facts) and
    penalty 1.0's distinct answers beside temp.json's at that temperature (``temp_distinct``)."""
    facts = repetition_facts(repetition)
    off = facts["off"]
    temp_row = temp.get(facts["temperature"]) if temp is not None else None
    temp_distinct = None if temp_row is None else temp_row.distinct
    compared = off is not None and temp_distinct is not None
    return facts | {
        "matches_temp": off.distinct == temp_distinct if compared else None,
        "temp_distinct": temp_distinct,
    }
