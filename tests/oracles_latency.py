"""The oracles of latency.json's claims beside sweep.json, from sweep.json's raw steps (latency's
own sentences are checked from the runs' stamps by their checks, mminfer.measures.time.latency).
``ORACLES[key](records, about)``: tests/oracles.py merges them."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping


def close(a, b) -> bool:
    return a is not None and b is not None and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-15)


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
    """ "… 캐시 없는 단계는 N = n(문맥 c)에서 s로 TPOT 한계를 처음 넘었다": the first clocked step
    not wholly below the limit is wholly above it."""
    sides = [(step, s, side(records, step)) for step, s in clocked_uncached(records)]
    undecided_or_over = [(step, s, found) for step, s, found in sides if found != "below"]
    if not undecided_or_over or undecided_or_over[0][2] != "above":
        return False
    step, seconds, _ = undecided_or_over[0]
    sweep = records["sweep"]
    return (
        about["new_tokens"] == step + 1
        and about["context"] == sweep.prompt_len + step
        and close(about["step_s"], seconds)
        and sweep.verdict != "untrusted"
    )


def sweep_never_crosses(records, about) -> bool:
    """ "… N = n(문맥 c)까지 TPOT 한계를 넘지 않았다": no clocked uncached step over the limit,
    n the last clocked one."""
    clocked = clocked_uncached(records)
    return (
        bool(clocked)
        and all(side(records, step) == "below" for step, _ in clocked)
        and about["new_tokens"] == clocked[-1][0] + 1
    )


ORACLES: dict[str, Callable[[Mapping, Mapping], bool]] = {
    "latency.sweep_crosses": sweep_crosses,
    "latency.sweep_never_crosses": sweep_never_crosses,
}
