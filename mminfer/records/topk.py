"""topk.json: the task's trap, measured. Its record and the facts its report section reads.

Pure Python, no torch: the report reads the record without the model code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from mminfer.records import Answer, ChatPrompt, Glance, RunInfo

if TYPE_CHECKING:
    from mminfer.records.temp import Temperatures
    from mminfer.records.topp import TopP


@dataclass
class TopKTemperature:
    """One temperature of topk.json: step 5's answers with generate's default top_k left on."""

    distinct: int
    samples: int
    top_share: float  # the most common answer's share
    cut_first: float  # the probability top-k removed at the first answer token (every sample's)
    cut_mean: float  # the same, averaged over every step that drew an answer's token or its eos
    steps: int  # the steps cut_mean averages (over all samples)
    ids_past_tokenizer: int  # the answers' ids at or past the tokenizer's end, shown as ⟨id N⟩
    answers: list[Answer]  # most common first


@dataclass
class TopK:
    """topk.json: the task's trap, measured: what generate's default top_k does to steps 5 and 6.

    ``temp``: step 5's experiment (temp's question, temperatures, seed, samples, new tokens) with
    top_k on; ``topp``: step 6's survivors when top-k runs first (MiniMind's order: every logit
    below the k-th set to -inf, then top-p).
    """

    top_k: int
    temp: dict[str, TopKTemperature]  # "0.3" -> its answers with top_k on, lowest first
    topp: dict[str, int]  # "0.9" -> survivors of top-k then top-p after [bos] + prefix
    top_k_survivors: int  # survivors of top-k alone at that position (more than k on a tie)
    prefix: str
    samples: int
    new_tokens: int
    seed: int
    prompt: ChatPrompt
    run: RunInfo  # the SFT model's (temp); its inputs: every file the result came from
    topp_run: RunInfo  # the pretrained model's (topp)


def direction(after: int, before: int) -> str:
    """ "fewer", "same" or "more": how a count moved from ``before`` to ``after``."""
    if after < before:
        return "fewer"
    if after > before:
        return "more"
    return "same"


def topk_facts(topk: TopK, temp: Temperatures | None = None, topp: TopP | None = None) -> dict:
    """topk.json beside temp.json and topp.json (the same experiments with top-k off).

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
    cut = [row["without_top_k"] - row["with_top_k"] for row in ps if row["without_top_k"]]
    hottest = temperatures[-1]
    return {
        "ids_past_tokenizer": sum(s.ids_past_tokenizer for s in topk.temp.values()),
        "with_counts": [row["with_top_k"].distinct for row in temperatures],
        "without_counts": [row["without_top_k"] for row in temperatures],
        "top_k": topk.top_k,
        "prefix": topk.prefix,
        "samples": topk.samples,
        "seed": topk.seed,
        "temperatures": temperatures,
        "ps": ps,
        "top_k_survivors": topk.top_k_survivors,
        "compared_with_temp": bool(moved),
        "counts_moved": any(way != "same" for way in moved),
        "hottest": hottest,
        "hottest_fewer": hottest["moved"] == "fewer",
        "compared_with_topp": bool(cut),
        "topp_cut": any(n > 0 for n in cut),
        "lora": topk.run.lora is not None,
    }


def topk_glance(topk: TopK, temp: Temperatures | None = None, topp: TopP | None = None) -> Glance:
    """## top-k's row: "moved" (top-k changed a distinct count against temp.json), "same", or
    "alone" (no temp.json to compare with)."""
    facts = topk_facts(topk, temp, topp)
    if not facts["compared_with_temp"]:
        lesson = "alone"
    elif facts["counts_moved"]:
        lesson = "moved"
    else:
        lesson = "same"
    return Glance(lesson=lesson, terms=("top_k", "distinct"))
