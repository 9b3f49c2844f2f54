"""## 호출 수 줄이기: lookup.json's facts and glance row.

Prompt lookup cuts the forward calls, where the cache cut the tokens each call feeds: the lesson
is how many calls the same greedy ids took, whether the loop was faster than MiniMind's cached
generate in the same rounds (said only where the rounds decide it), and what a call of K + 1
tokens costs against a one-token step on this machine.
"""

from __future__ import annotations

from mminfer.measures.lookup import decide
from mminfer.measures.lookup.lookup import Lookup, mean_accepted
from mminfer.records import Glance

# Each case's name in the report: the first column of the tables
CASE_NAMES = {
    "validation": "검증 문서 (사전학습 모델)",
    "chat": "채팅 질문 (SFT 모델)",
}


def lookup_facts(lookup: Lookup) -> dict:
    """lookup.json's facts: the cases in order, each K's mean kept per call, the functions the
    sentences' words call."""
    first = next(iter(lookup.cases.values()))
    return vars(lookup) | {
        "case_names": CASE_NAMES,
        "means": {
            name: {g.guesses: mean_accepted(g) for g in case.by_guesses}
            for name, case in lookup.cases.items()
        },
        "new_tokens": first.new_tokens,
        "device": first.run.device,
        "dtype": first.run.dtype,
        "busy": lookup.contention is not None and lookup.contention.busy,
    }


def lookup_glance(lookup: Lookup) -> Glance:
    """## 호출 수 줄이기's row: "differ" (ids part on a clear winner), "faster" (fewer calls on the
    validation prompt and some K decided faster there), "fewer" (fewer calls, no K decided
    faster), "none" (no fewer calls)."""
    lesson = decide.glance(lookup)
    return Glance(lesson=lesson, verdict=None, terms=("prompt_lookup",))
