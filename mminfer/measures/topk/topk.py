"""topk.json: the task's trap, measured. Its record and the facts its report section reads.

Pure Python, no torch: the report reads the record without the model code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from mminfer.records import Answer, ChatPrompt, Glance, RunInfo
from mminfer.records.claims import Claim, claim

if TYPE_CHECKING:
    from mminfer.measures.temp.temp import Temperatures
    from mminfer.measures.topp.topp import TopP


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
    top_k_mass: float  # the probability those survivors hold there (T = 1): top-p after top-k
    # counts within it, renormalised, so it reaches p sooner than top-p alone
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
        "record_mass": topk.top_k_mass,
        "compared_with_temp": bool(moved),
        "counts_moved": any(way != "same" for way in moved),
        "compared_with_topp": bool(cut),
        "lora": topk.run.lora is not None,
        "claims": count_claims(temperatures) | survivor_claims(topk, ps),
    }


def count_claims(temperatures: list[dict]) -> dict[str, Claim]:
    """The lesson's claims on the distinct answers, top-k on against temp.json's (top-k off).

    ``counts_moved``: at some temperature the counts differ ("바뀌었다"); ``counts_same``: every
    temperature of topk.json has temp.json's row, with the same count ("온도마다 같았다").
    """
    compared = [row for row in temperatures if row["without_top_k"] is not None]
    with_counts = [row["with_top_k"].distinct for row in temperatures]
    without_counts = [row["without_top_k"] for row in temperatures]
    differ = [row for row in compared if row["with_top_k"].distinct != row["without_top_k"]]
    every_compared = bool(compared) and len(compared) == len(temperatures)
    return {
        "counts_moved": claim(
            "topk.counts_moved",
            bool(differ),
            with_counts=with_counts,
            without_counts=without_counts,
        ),
        "counts_same": claim(
            "topk.counts_same",
            every_compared and not differ,
            counts=with_counts,
        ),
    }


def survivor_claims(topk: TopK, ps: list[dict]) -> dict[str, Claim]:
    """The survivors' claims, top-k then top-p against top-p alone (topp.json), per p.

    ``fewer_at_every_p``: at every p fewer survive with top-k first; ``fewer_at_some_p``: fewer
    at the p named, the same at the others, more at none; ``same_at_every_p``; ``cap_reached``: at
    the p named every survivor of top-k alone survived top-p too; ``renormalised``:
    the top k hold less than all the probability (top_k_mass < 1), so top-p after top-k counts
    within a renormalised mass and reaches p sooner.
    """
    compared = [row for row in ps if row["without_top_k"] is not None]
    fewer = [row["p"] for row in compared if row["with_top_k"] < row["without_top_k"]]
    same = [row["p"] for row in compared if row["with_top_k"] == row["without_top_k"]]
    more = [row["p"] for row in compared if row["with_top_k"] > row["without_top_k"]]
    every = bool(compared) and len(compared) == len(ps)
    capped = [row["p"] for row in ps if row["with_top_k"] == topk.top_k_survivors]
    return {
        "fewer_at_every_p": claim(
            "topk.fewer_at_every_p",
            every and len(fewer) == len(ps),
            ps=[row["p"] for row in ps],
            with_counts=[row["with_top_k"] for row in ps],
            without_counts=[row["without_top_k"] for row in ps],
        ),
        "fewer_at_some_p": claim(
            "topk.fewer_at_some_p",
            every and bool(fewer) and bool(same) and not more,
            fewer=fewer,
            same=same,
        ),
        "same_at_every_p": claim(
            "topk.same_at_every_p",
            every and len(same) == len(ps),
        ),
        "cap_reached": claim(
            "topk.cap_reached",
            bool(capped),
            ps=capped,
            survivors=topk.top_k_survivors,
        ),
        "whole_mass": claim(
            "topk.whole_mass",
            topk.top_k_mass >= 1.0,
            k=topk.top_k,
        ),
        "renormalised": claim(
            "topk.renormalised",
            topk.top_k_mass < 1.0,
            k=topk.top_k,
            mass=topk.top_k_mass,
        ),
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
