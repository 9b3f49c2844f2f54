"""## 고정 비용 줄이기: remedies.json's facts and glance row (its words in remedies.md.j2)."""

from __future__ import annotations

from dataclasses import fields

from mminfer.measures.remedies import decide
from mminfer.measures.remedies.remedies import Remedies
from mminfer.records import Glance


def remedies_facts(remedies: Remedies) -> dict:
    """remedies.json's facts: the remedies that ran, those that did not, whether every run one
    gave MiniMind's ids."""
    ran = [r for r in remedies.remedies.values() if r.applies]
    return {field.name: getattr(remedies, field.name) for field in fields(remedies)} | {
        "ran": ran,
        "names": NAMES,
        # MiniMind's cached generate, one side shared by every remedy's rounds
        "minimind_interval": next(r.minimind_interval for r in ran if r.minimind_interval),
        "skipped": [r for r in remedies.remedies.values() if not r.applies],
        "all_same": all(r.same_ids for r in ran),
        # another process shared the cores while some remedy was timed (mminfer.records.machine)
        "busy": any(r.contention is not None and r.contention.busy for r in ran),
        "keep": remedies.logits_to_keep,
        "compile_cost": remedies.compile_cost,
        "steps": remedies.new_tokens,
        "device": remedies.run.device,
        "dtype": remedies.run.dtype,
    }


def remedies_glance(remedies: Remedies) -> Glance:
    """## 고정 비용 줄이기's row: "differ" (a remedy's ids part from MiniMind's), "saves" (some
    remedy's rounds decide a saving), "none" (none does); no verdict of its own."""
    if decide.differing(remedies):
        lesson = "differ"
    elif any(decide.saves_of(r) == "above" for r in remedies.remedies.values()):
        lesson = "saves"
    else:
        lesson = "none"
    return Glance(lesson=lesson, verdict=None, terms=("in_place_cache", "token_ratio"))


# Each remedy's name in the report (its table's first column, the lesson's remedy)
NAMES = {
    "loop": "자체 루프 (치료 없음, 대조군)",
    "in_place_cache": "제자리 캐시 (torch.cat 없음)",
    "gqa_without_repeat_kv": "repeat_kv 없는 GQA 어텐션",
    "all": "둘 다",
    "compile": "torch.compile (제자리 캐시 위)",
}
