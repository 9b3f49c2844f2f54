"""A sentence is a claim: the relation its words state, checked on the record it speaks of.

A section's facts (mminfer/records/<name>.py) give every sentence that states a relation (grows,
falls, the same, every, faster, binds, a share) as a :class:`Claim`: a key naming the sentence
(``"<section>.<name>"``), whether the predicate of its literal words holds on the record, and the
figures the sentence cites (``about``), which the template prints from the claim itself so that
the words and what was checked cannot part. The template asks ``said(claim)`` before it writes the
sentence: a claim that holds is written, one that does not is suppressed, and the section goes on
to what does hold, or says that the run cannot tell.

Every question is tallied in a :class:`ClaimLog`: the report job's log counts the claims written
and those suppressed, and the tests hold every written claim to an oracle of their own, computed
from the record's raw numbers (tests/oracles.py). A claim cannot be tested for truth in a template
by ``{% if claim %}``: only ``said`` reads it, so no sentence skips the tally.

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
            f"claim {self.key!r} read as a truth value: a template asks said(claim), which "
            "tallies it (mminfer.records.claims)"
        )


def claim(key: str, holds: bool, **about) -> Claim:
    """A :class:`Claim`: ``claim("serve.cliff_cache", between, levels=names)``."""
    return Claim(key=key, holds=holds, about=about)


class ClaimLog:
    """The claims a rendering asked about, in order: each written (it held) or suppressed."""

    def __init__(self):
        self.asked: list[Claim] = []

    def said(self, claim: Claim) -> bool:
        """Whether the template may write ``claim``'s sentence; the question is tallied."""
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
