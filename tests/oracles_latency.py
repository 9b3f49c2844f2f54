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


def sweep_crosses(records, about) -> bool:
    """ "… 캐시 없는 단계는 N = n(문맥 c)에서 s로 TPOT 한계를 처음 넘었다"."""
    limit = records["latency"].tpot_limit_s
    over = [(step, s) for step, s in clocked_uncached(records) if s > limit]
    if not over:
        return False
    step, seconds = over[0]
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
    limit = records["latency"].tpot_limit_s
    clocked = clocked_uncached(records)
    return (
        bool(clocked)
        and all(s <= limit for _, s in clocked)
        and about["new_tokens"] == clocked[-1][0] + 1
    )


ORACLES: dict[str, Callable[[Mapping, Mapping], bool]] = {
    "latency.sweep_crosses": sweep_crosses,
    "latency.sweep_never_crosses": sweep_never_crosses,
}
