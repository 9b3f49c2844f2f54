"""topk.json beside temp.json and topp.json (top-k off): which way top-k moved the counts.

A join of two rules' records lives in its report section (.importlinter); pure Python, no torch.
"""

from __future__ import annotations

from mminfer.measures.temp.temp import Temperatures
from mminfer.measures.topk.topk import TopK
from mminfer.measures.topp.topp import TopP


def direction(after: int, before: int) -> str:
    """ "fewer", "same" or "more": how a count moved from ``before`` to ``after``."""
    if after < before:
        return "fewer"
    if after > before:
        return "more"
    return "same"


def counts_against_temp(topk: TopK, temp: Temperatures | None) -> str:
    """The distinct answers, top-k on against temp.json's (top-k off), each temperature one draw
    of the same seed's samples: "moved" (they differ at two temperatures or more), "moved_once"
    (at one: one sample, too little to say top_k changes the count), "same" (every temperature of
    topk.json has temp.json's row, with the same count), "alone" (no temp.json, or not every
    temperature in it)."""
    compared = [
        (summary.distinct, temp[key].distinct)
        for key, summary in topk.temp.items()
        if temp is not None and key in temp
    ]
    differ = sum(on != off for on, off in compared)
    if differ > 1:
        return "moved"
    if differ == 1:
        return "moved_once"
    if compared and len(compared) == len(topk.temp):
        return "same"
    return "alone"


def survivors_against_topp(topk: TopK, topp: TopP | None) -> str | None:
    """The survivors, top-k then top-p against top-p alone (topp.json), per p: "fewer" (at every
    p), "some" (fewer at some p, the same at the others), "same" (at every p); None where more
    survive at some p, or topp.json lacks a p."""
    if topp is None or not topk.topp or any(topp.get(key) is None for key in topk.topp):
        return None
    pairs = [(survivors, topp[key]) for key, survivors in topk.topp.items()]
    if all(on < off for on, off in pairs):
        return "fewer"
    if any(on > off for on, off in pairs):
        return None
    if any(on < off for on, off in pairs):
        return "some"
    return "same"


def compared_with_topp(topk: TopK, topp: TopP | None) -> bool:
    """topp.json has a p of topk.json's with survivors to compare."""
    return topp is not None and any(topp.get(key) for key in topk.topp)


def mass_against_topp(topk: TopK, topp: TopP | None) -> str | None:
    """Beside topp.json: "renormalised" (the top k hold less than all the probability,
    top_k_mass < 1, so top-p after top-k counts within a renormalised mass and reaches p sooner),
    "whole" (they hold it all); None without topp.json to compare with."""
    if not compared_with_topp(topk, topp):
        return None
    if topk.top_k_mass < 1.0:
        return "renormalised"
    if topk.top_k_mass >= 1.0:
        return "whole"
    return None
