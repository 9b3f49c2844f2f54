"""The tests' own judges of the report's decisions: one oracle per key (mminfer.report.decided).

An oracle reads the literal words of the claim's sentence and checks them against the record's raw
numbers (the batches' tokens per second, the runs' seconds, the steps' clocked flags), never
against the facts' intermediate values, so a facts function that chose the wrong branch, or a
predicate that reads less than its words say, is caught. ``ORACLES[key](records, about)`` is True
where the sentence, with the figures it cites (``about``), is true of ``records`` (render_report's
mapping, by measurement name).

A converted section's sentence (mminfer.records.sentences) is written only where the predicate
beside its words holds on the records themselves; it keeps an oracle only where one recomputes
its words from the raw runs independently of that predicate, and is otherwise not judged again.

Each measurement's oracles live in a module of their own (tests/oracles_<topic>.py), merged here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping

from oracles_anatomy import ORACLES as ANATOMY_ORACLES
from oracles_conversation import ORACLES as CONVERSATION_ORACLES
from oracles_latency import ORACLES as LATENCY_ORACLES
from oracles_lookup import ORACLES as LOOKUP_ORACLES
from oracles_remedies import ORACLES as REMEDIES_ORACLES
from oracles_repetition import ORACLES as REPETITION_ORACLES
from oracles_sampling import ORACLES as SAMPLING_ORACLES
from oracles_serve import ORACLES as SERVE_ORACLES
from oracles_sweep import ORACLES as SWEEP_ORACLES
from oracles_timing import ORACLES as TIMING_ORACLES

from mminfer.report.render import decide_modules, sentence_table

ORACLES: dict[str, Callable[[Mapping, Mapping], bool]] = TIMING_ORACLES | LATENCY_ORACLES
ORACLES |= SAMPLING_ORACLES | SERVE_ORACLES | SWEEP_ORACLES | ANATOMY_ORACLES
ORACLES |= REMEDIES_ORACLES | LOOKUP_ORACLES | CONVERSATION_ORACLES | REPETITION_ORACLES


def denied(records: Mapping, claims) -> list[str]:
    """The claims the report wrote that their oracle denies (each with the figures it cited)."""
    found = []
    for claim in claims.written:
        if claim.key in sentence_table() and not claim.said:
            continue  # a decide.py function a template asks, named as a sentence is
        oracle = ORACLES.get(claim.key)  # None: its predicate, beside its words, decided it
        if oracle is not None and not oracle(records, claim.cited):
            found.append(f"{claim.key} {dict(claim.cited)}")
    return found


def unsupported(records: Mapping, claims) -> list[str]:
    """The comparison sentences the report wrote that their check, recomputed from the raw runs
    (mminfer.records.sentences), does not support."""
    found = []
    for claim in claims.written:
        sentence = sentence_table().get(claim.key)
        if sentence is None or not sentence.compares or not claim.said:
            continue
        chosen = claim.value
        if not sentence.supported(records, chosen):
            found.append(f"{claim.key}: {chosen}")
    return found


def honest_of(key: str):
    """The decision the words of ``key`` follow: a sentence's predicate, or the decide.py
    function a template asks (``"time.fixed_cost_said"``)."""
    if key in sentence_table():
        return sentence_table()[key].holds
    folder, name = key.split(".", 1)
    return getattr(decide_modules()[folder], name)


def plant(monkeypatch, key: str, holds) -> None:
    """The decision ``key`` planted (a sentence's predicate, or the decide.py function its
    template asks) beside its honest words."""
    if key in sentence_table():
        honest = sentence_table()[key]
        monkeypatch.setitem(sentence_table(), key, dataclasses.replace(honest, holds=holds))
        return
    folder, name = key.split(".", 1)
    monkeypatch.setattr(decide_modules()[folder], name, holds)


def ask(key: str, records: Mapping, **given):
    """What the decision ``key`` (a decide.py function, "<folder>.<name>") answers on
    ``records``, each record its parameters name taken from them (None where absent) and the
    figures ``given`` by name: the value a template would word."""
    import inspect

    function = honest_of(key)
    names = [name for name in inspect.signature(function).parameters if name not in given]
    return function(*(records.get(name) for name in names), **given)
