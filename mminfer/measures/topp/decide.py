"""What topp.json and topp_detail.json decide: the open position against the sharp one.

Pure Python, no torch.
"""

from __future__ import annotations

from mminfer.measures.topp.topp import TopP, TopPDetail


def positions_compared(topp: TopP, topp_detail: TopPDetail | None) -> str | None:
    """The open position against the sharp one: "wider" (it keeps more at every p, and its
    distribution is the wider), "more" (more at every p, the entropies not in that order),
    "not_more" (not more at every p); None without topp_detail.json."""
    if topp_detail is None:
        return None
    open_position = topp_detail.positions["open"]
    sharp = topp_detail.positions["sharp"]
    more = all(n > sharp.survivors[p] for p, n in topp.items())
    wider = open_position.entropy_bits > sharp.entropy_bits
    if more and wider:
        return "wider"
    if more:
        return "more"
    return "not_more"
