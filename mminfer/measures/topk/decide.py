"""What topk.json decides on its own: whether k was the bound at some p (its joins with temp.json
and topp.json are its report section's joins.py). Pure Python, no torch.
"""

from __future__ import annotations

from mminfer.measures.topk.topk import TopK


def cap_reached(topk: TopK) -> bool:
    """At some p every survivor of top-k alone survived top-p too: there k is the bound."""
    return any(survivors == topk.top_k_survivors for survivors in topk.topp.values())
