"""The tests' own judges of the report's decisions: one oracle per key (mminfer.report.decided).

An oracle reads the literal words a decision's variant is worded with and checks them against
the record's raw numbers (the batches' tokens per second, the runs' seconds, the steps' clocked
flags), never against the facts' intermediate values, so a decide.py function that chose the
wrong branch, or reads less than its words say, is caught. ``ORACLES[key](records, about)`` is
True where the words of the decision ``key`` ("<folder>.<function>", decide.py's), with the
variant and figures it was asked with (``about``), are true of ``records`` (render_report's
mapping, by measurement name). A decision without an oracle is not judged again.

Each measurement's oracles live in a module of their own (tests/oracles_<topic>.py), merged here.
"""

from __future__ import annotations

import inspect
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

from mminfer.report.render import decide_modules

ORACLES: dict[str, Callable[[Mapping, Mapping], bool]] = TIMING_ORACLES | LATENCY_ORACLES
ORACLES |= SAMPLING_ORACLES | SERVE_ORACLES | SWEEP_ORACLES | ANATOMY_ORACLES
ORACLES |= REMEDIES_ORACLES | LOOKUP_ORACLES | CONVERSATION_ORACLES | REPETITION_ORACLES


def denied(records: Mapping, claims) -> list[str]:
    """The decisions the report wrote that their oracle denies (each with the figures it cited);
    a decision without an oracle is decided by its function alone and not judged again."""
    found = []
    for claim in claims.written:
        oracle = ORACLES.get(claim.key)
        if oracle is not None and not oracle(records, claim.cited):
            found.append(f"{claim.key} {dict(claim.cited)}")
    return found


def owner_of(key: str):
    """The module that holds the decision ``key`` ("<folder>.<name>"): the folder's decide.py,
    or its report section's joins.py."""
    folder, name = key.split(".", 1)
    return next(module for module in decide_modules()[folder] if hasattr(module, name))


def honest_of(key: str):
    """The function the words of the decision ``key`` ("<folder>.<name>") follow."""
    return getattr(owner_of(key), key.split(".", 1)[1])


def plant(monkeypatch, key: str, holds) -> None:
    """The decision ``key`` planted where it lives, beside its honest words."""
    monkeypatch.setattr(owner_of(key), key.split(".", 1)[1], holds)


def ask(key: str, records: Mapping, **given):
    """What the decision ``key`` (a decide.py function, "<folder>.<name>") answers on
    ``records``, each record its parameters name taken from them (None where absent) and the
    figures ``given`` by name: the value a template would word."""
    function = honest_of(key)
    names = [name for name in inspect.signature(function).parameters if name not in given]
    return function(*(records.get(name) for name in names), **given)
