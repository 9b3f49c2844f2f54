"""What capacity.json decides: whether the cache's bytes are the formula's, exactly (which bound
decides the users per card reads serve.json: mminfer.measures.serve.decide.capacity_bound).
Pure Python, no torch.
"""

from __future__ import annotations

from mminfer.measures.capacity.capacity import Capacity


def formula_counts(capacity: Capacity) -> str:
    """ "exact": every dtype's bytes a token and a real batch's cache are the formula's;
    "counted": not all of them."""
    check = capacity.batch_check
    exact = check.measured_bytes == check.predicted_bytes and all(
        per_token.measured == per_token.formula for per_token in capacity.bytes_per_token.values()
    )
    return "exact" if exact else "counted"


def batch_matches(capacity: Capacity) -> str:
    """Users per card glance: "matches" (a real batch's cache is the prediction) or
    "differs"."""
    return "matches" if capacity.batch_check.matches else "differs"
