"""The oracles of latency.json's claims beside sweep.json, from sweep.json's raw steps (latency's
own sentences are checked from the runs' stamps by their checks, mminfer.measures.time.latency).
``ORACLES[key](records, about)``: tests/oracles.py merges them."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping


def clocked_uncached(records) -> list[tuple[int, float]]:
    return [
        (step, seconds)
        for step, seconds in enumerate(records["sweep"].steps.without_cache_s)
        if seconds is not None
    ]


def side(records, step: int) -> str:
    """The step's runs against the TPOT limit: "above" or "below" only where the order-statistic
    interval [x(k), x(n+1-k)] covering the median with at least 90 % lies wholly on one side."""
    runs = sorted(run[step] for run in records["sweep"].steps.without_cache_runs_s)
    n, limit = len(runs), records["latency"].tpot_limit_s
    for k in range(n // 2, 0, -1):  # the narrowest interval that still covers 90 %
        miss = sum(math.comb(n, i) for i in range(k)) / 2**n
        if n > 1 and 1 - 2 * miss >= 0.9 - 1e-12:
            low, high = runs[k - 1], runs[n - k]
            return "above" if low > limit else "below" if high < limit else "undecided"
    return "undecided"


def sweep_crosses(records, about) -> bool:
    """ "캐시 없는 단계는 … TPOT 한계를 처음 넘었다" / "… 넘지 않았다" / "… 가를 수 없다": the first
    clocked uncached step not wholly below the limit lies wholly above it, across it, or none."""
    sides = [side(records, step) for step, _ in clocked_uncached(records)]
    found = next((found for found in sides if found != "below"), "never")
    return {"above": "crosses", "undecided": "undecided", "never": "never"}[found] == about[
        "variant"
    ]


ORACLES: dict[str, Callable[[Mapping, Mapping], bool]] = {"latency.sweep_crosses": sweep_crosses}
