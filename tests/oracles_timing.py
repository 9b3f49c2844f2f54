"""The oracles of the timing side's claims: time, sweep, serve, same, run (kvbytes's and capacity's
sentences are checked by their own predicates, beside their words: their SENTENCES).

Each reads its sentence's literal words and checks them on the record's raw numbers (the runs'
seconds, the steps' clocked times and their ranges, the passes' median steps and prefills), never
on the facts' intermediate values. ``ORACLES[key](records, about)``: tests/oracles.py merges them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from pathlib import PurePosixPath


def close(a: float, b: float) -> bool:
    """Two figures the same to rounding (a claim cites the figure its check used)."""
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-15)


def count_differs_from_formula(records, about) -> bool:
    """ "`forward`에 넣은 토큰이 공식과 다르다": a count against its formula, computed here from
    P and N (P + (N - 1) with the cache, N P + N (N - 1) / 2 without); the words print the
    record's counts (count.py's sentence)."""
    count = records["count"]
    p, n = count.prompt_len, count.new_tokens
    with_cache = p + n - 1
    without_cache = n * p + n * (n - 1) // 2
    return count.fed_with_cache != with_cache or count.fed_without_cache != without_cache


# --- serve.json -------------------------------------------------------------------------------


def serve_cliff_cache(records, about) -> bool:
    """ "장치 캐시를 넘음(추정): L2, ...": each named cache's size lies between the memory the
    step reads at the two batches (every weight and the batch's KV cache)."""
    serve = records["serve"]
    sizes = {level.name: level.bytes for level in serve.caches}
    for cliff in serve.cliffs:
        if (cliff.from_batch, cliff.to_batch) != (about["from_batch"], about["to_batch"]):
            continue
        before = cliff.weight_bytes + cliff.kv_bytes_before
        after = cliff.weight_bytes + cliff.kv_bytes_after
        return bool(about["levels"]) and all(
            name in sizes and before < sizes[name] <= after for name in about["levels"]
        )
    return False


# --- same, run ---------------------------------------------------------------------------


def run_course_folder(records, about) -> bool:
    """ "(MiniMind 강의 체크포인트, /opt/mm)": both checkpoints the run read lie in it; "읽은 폴더
    ...": not both do."""
    folder = PurePosixPath(about["folder"])
    runs = [records["same"].run, next(iter(records["temp"].values())).run]
    inside = all(PurePosixPath(run.checkpoint).is_relative_to(folder) for run in runs)
    return inside == (about["variant"] == "inside")


def judged(found: Callable[[Mapping], str], word: str) -> Callable[[Mapping, Mapping], bool]:
    return lambda records, about: found(records) == word


ORACLES: dict[str, Callable[[Mapping, Mapping], bool]] = {
    "count.differs_from_formula": count_differs_from_formula,
    "serve.cliff_cache": serve_cliff_cache,
    "run.course_folder": run_course_folder,
}
