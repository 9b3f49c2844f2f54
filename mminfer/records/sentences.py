"""A sentence is written once: its key, the predicate its words state, and its words, one entry.

Each section module (mminfer/report/sections/<section>/<name>.py; docs/development.md, "A sentence
is a claim") lists every sentence that states a relation in ``SENTENCES``: a :class:`Sentence`
names it (``"<section>.<name>"``), gives the predicate on the records (its
parameters are measurement names, as a facts function's) and the Korean words, a Jinja snippet
that prints its figures from those records. A sentence with variants is one entry: its predicate
returns the variant whose words hold (an enum's value, a string), or None where none does; a plain
sentence's predicate returns whether its words hold.

The template asks ``{{ say("kvbytes.bytes") }}`` (mminfer.report.render): the predicate is
evaluated on the rendering's records, the words of what holds are written, and a sentence whose
predicate is false writes nothing. Each question is logged in the rendering's
:class:`~mminfer.report.decided.DecisionLog` as a :class:`~mminfer.report.decided.Decision` of the
same key (the variant its value), so the job's log and the tests see every sentence.

A sentence that compares timed figures (faster, slower, the same, within a limit, a share, grew)
also gives ``check``: :func:`recomputed` for every sentence today (its predicate is its
measure's decision, from the raw runs; the checker recomputes it on the records read back), or a
callable that says whether the raw runs support the words (the form a test plants). The
checker (mminfer.report.check) runs it for every such sentence a report wrote, and fails the
results folder on any it does not support; the independent re-derivations are the suite's
oracles (tests/oracles_*.py).

Pure Python, no torch: the report rule imports it.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType


def recomputed(**records) -> bool:
    """A sentence's ``check`` where its predicate is the decision itself (a measures folder's
    decide.py, over the raw runs): the checker recomputes the predicate on the records read back
    from the JSON and compares it with the variant written (:meth:`Sentence.supported`). A
    marker: never called."""
    raise TypeError("recomputed marks a check; Sentence.supported recomputes the predicate")


@dataclass(frozen=True)
class Sentence:
    """One sentence: its key, the predicate of its words on the records, its words (per variant)."""

    key: str  # "<section>.<name>"
    holds: Callable[..., bool | str | None]  # records by name -> True/False, or the variant/None
    words: str | Mapping[str, str]  # Korean, a Jinja snippet on the records; or a variant's each
    # A comparison's independent check: records by name (and the variant chosen, as ``chosen``)
    # -> whether the raw runs support the words (mminfer.report.check); None: not a comparison. A
    # plain sentence's check without ``chosen`` says whether its words hold on the runs: it is
    # supported where that equals whether it was written.
    check: Callable[..., bool] | None = None
    # Figures the template gives at each ask besides the records, by name: the row a sentence
    # speaks of in a table (serve.cliff_cache's ``cliff``); the predicate takes them after the
    # records, the words print them.
    given: tuple[str, ...] = ()
    # The figures the tally's claim records (``about``), from the given figures by name: what a
    # test's oracle reads to recompute the words (the cliff's batches, the caches it names).
    about: Callable[..., Mapping] | None = None

    def __post_init__(self):
        if "." not in self.key:
            raise ValueError(f"a sentence's key is '<section>.<name>', not {self.key!r}")
        if isinstance(self.words, Mapping):
            if not self.words:
                raise ValueError(f"sentence {self.key!r} has no variants")
            object.__setattr__(self, "words", MappingProxyType(dict(self.words)))

    @property
    def section(self) -> str:
        return self.key.split(".", 1)[0]

    @property
    def parameters(self) -> list[str]:
        """The measurements whose records the predicate reads by name (its parameters but the
        given and a ``**records``)."""
        found = inspect.signature(self.holds).parameters.items()
        return [
            name
            for name, parameter in found
            if parameter.kind is not parameter.VAR_KEYWORD and name not in self.given
        ]

    @property
    def reads_every_record(self) -> bool:
        """Whether the predicate also takes ``**records``: every record the report has, by name
        (the busy line's, which reads each timing record)."""
        found = inspect.signature(self.holds).parameters.values()
        return any(parameter.kind is parameter.VAR_KEYWORD for parameter in found)

    def records_read(self, records: Mapping[str, object]) -> dict[str, object]:
        """The records the predicate is given: those its parameters name (None where absent),
        and every other one where it takes ``**records``."""
        named = {name: records.get(name) for name in self.parameters}
        return (dict(records) | named) if self.reads_every_record else named

    @property
    def compares(self) -> bool:
        """Whether the sentence states a comparison of timed figures (it has a ``check``)."""
        return self.check is not None

    def supported(self, records: Mapping[str, object], chosen: bool | str) -> bool:
        """Whether the raw runs in ``records`` support the words written for ``chosen``: the
        ``check`` with the records its parameters name (a check taking ``**records``: those
        the predicate names), and ``chosen`` where it takes it; where the check is
        :func:`recomputed`, the predicate itself on ``records``."""
        if self.check is recomputed:
            return self.choose(records) == chosen
        parameters = inspect.signature(self.check).parameters
        names = [name for name in parameters if name != "chosen"]
        given = {name: records.get(name) for name in names}
        if any(parameter.kind is parameter.VAR_KEYWORD for parameter in parameters.values()):
            given = self.records_read(records)
        if "chosen" in parameters:
            given["chosen"] = chosen
            return bool(self.check(**given))
        found = bool(self.check(**given))
        if isinstance(self.words, str):  # a plain sentence's check: whether its words hold
            return found == bool(chosen)  # written exactly where they do
        return found

    def choose(self, records: Mapping[str, object], **given) -> bool | str | None:
        """What holds on ``records`` (by measurement name; one not given is None) and the
        ``given`` figures: a plain sentence's truth, or a variant's name (None where none
        holds)."""
        missing = [name for name in self.given if name not in given]
        if missing:
            raise TypeError(f"sentence {self.key!r} is asked without its figures {missing}")
        figures = {name: given[name] for name in self.given}
        chosen = self.holds(**self.records_read(records), **figures)
        if isinstance(self.words, str):
            return bool(chosen)
        if chosen is not None and chosen not in self.words:
            raise ValueError(
                f"sentence {self.key!r} chose {chosen!r}, which has no words: {sorted(self.words)}"
            )
        return chosen

    def words_of(self, chosen: bool | str) -> str:
        """The words to write for what holds."""
        if isinstance(self.words, str):
            return self.words
        return self.words[chosen]
