"""## top-k 함정: topk.json's facts and glance row, beside temp.json and topp.json."""

from __future__ import annotations

from mminfer.measures.temp.temp import Temperatures
from mminfer.measures.topk.topk import TopK
from mminfer.measures.topp.topp import TopP
from mminfer.records import Glance
from mminfer.report.sections.topk.joins import (
    compared_with_topp,
    counts_against_temp,
    direction,
)


def topk_facts(topk: TopK) -> dict:
    """topk.json's own figures: top-k on, each temperature's answers and each p's survivors.

    Beside temp.json and topp.json (the same experiments with top-k off: which way top-k moved
    the counts) is this module's join.
    """
    return {
        "ids_past_tokenizer": sum(s.ids_past_tokenizer for s in topk.temp.values()),
        "with_counts": [summary.distinct for summary in topk.temp.values()],
        "top_k": topk.top_k,
        "prefix": topk.prefix,
        "samples": topk.samples,
        "seed": topk.seed,
        "top_k_survivors": topk.top_k_survivors,
        "record_mass": topk.top_k_mass,
        "lora": topk.run.lora is not None,
    }


def topk_temp_topp_facts(
    topk: TopK, temp: Temperatures | None = None, topp: TopP | None = None
) -> dict:
    """topk.json (mminfer.measures.topk.topk.topk_facts) beside temp.json and topp.json (the
    same experiments with top-k off).

    Per temperature: the distinct answers both ways, which way top-k moved them, the probability
    it cut; per p: the survivors both ways; whether top-k changed any count at all.
    """
    temperatures = []
    for key, summary in topk.temp.items():
        without = temp[key].distinct if temp is not None and key in temp else None
        temperatures.append(
            {
                "temperature": key,
                "with_top_k": summary,
                "without_top_k": without,
                "moved": None if without is None else direction(summary.distinct, without),
            }
        )
    ps = []
    for key, survivors in topk.topp.items():
        without = topp.get(key) if topp is not None else None
        ps.append({"p": key, "with_top_k": survivors, "without_top_k": without})
    moved = [row["moved"] for row in temperatures if row["moved"] is not None]
    return topk_facts(topk) | {
        "without_counts": [row["without_top_k"] for row in temperatures],
        "temperatures": temperatures,
        "ps": ps,
        "compared_with_temp": bool(moved),
        "counts_moved": any(way != "same" for way in moved),
        "compared_with_topp": compared_with_topp(topk, topp),
    }


def topk_temp_glance(topk: TopK, temp: Temperatures | None = None) -> Glance:
    """## top-k's row: its lesson topk.counts_against_temp's variant."""
    return Glance(
        lesson=counts_against_temp(topk, temp), terms=("top_k", "distinct", "survivor", "seed")
    )
