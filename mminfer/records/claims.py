"""The tally of a rendering: every sentence asked, written or suppressed, as a :class:`Claim`.

A sentence is one :class:`~mminfer.records.sentences.Sentence` (its key, the predicate of its
words, its words); the template asks ``{{ say(key) }}`` and the renderer tallies the question
here as a Claim of the same key: whether its predicate held (it was written) or not (suppressed),
and the figures it spoke of (``about``: the variant written, a table row's figures). The report
job's log counts them (:meth:`ClaimLog.summary`), the checker reads the written ones
(mminfer.report.check), and the tests hold each written claim to an oracle of their own computed
from the record's raw numbers (tests/oracles.py). A Claim is a log entry, never a sentence: it
cannot be read as a truth value.

Pure Python, no torch: the report rule imports it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType


@dataclass(frozen=True)
class Claim:
    """One sentence's relation: its key, whether it holds on its record, the figures it cites."""

    key: str  # "<section>.<name>": the sentence it guards (tests/oracles.py holds its oracle)
    holds: bool  # the predicate of the sentence's literal words, on the record
    about: Mapping = field(default_factory=dict)  # the figures the sentence names (batch, p, ...)

    def __post_init__(self):
        if "." not in self.key:
            raise ValueError(f"a claim's key is '<section>.<name>', not {self.key!r}")
        object.__setattr__(self, "holds", bool(self.holds))
        object.__setattr__(self, "about", MappingProxyType(dict(self.about)))

    def __bool__(self):
        raise TypeError(
            f"claim {self.key!r} read as a truth value: it is the tally's entry of a sentence "
            "asked (mminfer.records.claims); the sentence is what says whether it holds"
        )


class ClaimLog:
    """The claims a rendering asked about, in order: each written (it held) or suppressed."""

    def __init__(self):
        self.asked: list[Claim] = []

    def said(self, claim: Claim) -> bool:
        """Whether ``claim``'s sentence is written (its predicate held); the question is
        tallied."""
        if not isinstance(claim, Claim):
            raise TypeError(f"said() takes a Claim, not {type(claim).__name__}: {claim!r}")
        self.asked.append(claim)
        return claim.holds

    @property
    def rendered(self) -> list[Claim]:
        return [claim for claim in self.asked if claim.holds]

    @property
    def suppressed(self) -> list[Claim]:
        return [claim for claim in self.asked if not claim.holds]

    def summary(self) -> str:
        """One line for the report job's log: how many written, how many suppressed, which."""
        suppressed = sorted({claim.key for claim in self.suppressed})
        line = f"claims: {len(self.rendered)} rendered, {len(self.suppressed)} suppressed"
        if suppressed:
            line += " (" + ", ".join(suppressed) + ")"
        return line


class Tally:
    """The template's ``said``: it forwards to the log in force, so that the section modules
    rendered only to reach their ``glance`` macros do not count twice (mminfer.report.render)."""

    def __init__(self, log: ClaimLog):
        self.log = log

    def __call__(self, claim: Claim) -> bool:
        return self.log.said(claim)
