"""What a rendering decided: each decision its templates asked, logged under its function's key.

A template asks a measurement's decision by its function, ``decide.time.cache_faster(records.time)``
(mminfer/measures/time/decide.py; a join of two records' in its report section's joins.py), and
writes the words of the variant it returns. ``decide`` is
a :class:`Decided` made for that one rendering: every call it forwards is logged in its
:class:`DecisionLog` as a :class:`Decision` under the function's key ("time.cache_faster"), with
the value returned. The report job's log counts them, the tests hold each written one to an
oracle of their own keyed the same way (tests/oracles.py), and the checker reads them
(mminfer.report.check).

Pure Python, no torch: the report rule imports it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType, ModuleType


@dataclass(frozen=True)
class Decision:
    """One decision a rendering asked: its function's key, what it returned, the figures given."""

    key: str  # "<measurement>.<function>": time.cache_faster (tests/oracles.py holds its oracle)
    value: object  # the variant word, True/False, None (no words), or the figure its words print
    about: Mapping = field(default_factory=dict)  # the figures asked with by name (a table row's)

    def __post_init__(self):
        if "." not in self.key:
            raise ValueError(f"a decision's key is '<measurement>.<name>', not {self.key!r}")
        object.__setattr__(self, "about", MappingProxyType(dict(self.about)))

    @property
    def written(self) -> bool:
        """Whether words follow it: a variant or a figure was returned (not None, not False)."""
        return self.value is not None and self.value is not False

    @property
    def cited(self) -> dict:
        """What an oracle reads: the figures given, and the value as ``variant`` where it is one
        of several (a plain decision's True is not)."""
        return dict(self.about) if self.value is True else {"variant": self.value, **self.about}


class DecisionLog:
    """The decisions a rendering asked, in order."""

    def __init__(self):
        self.asked: list[Decision] = []

    def add(self, decision: Decision):
        """Log ``decision``; its value back."""
        self.asked.append(decision)
        return decision.value

    @property
    def written(self) -> list[Decision]:
        return [decision for decision in self.asked if decision.written]

    @property
    def unwritten(self) -> list[Decision]:
        return [decision for decision in self.asked if not decision.written]

    def summary(self) -> str:
        """One line for the report job's log: how many decisions asked, how many gave no words."""
        silent = sorted({decision.key for decision in self.unwritten})
        line = f"decisions: {len(self.written)} written, {len(self.unwritten)} without words"
        if silent:
            line += " (" + ", ".join(silent) + ")"
        return line


class Decided:
    """The template's ``decide``: each folder's decisions by its name (a measures folder's
    decide.py, then its report section's joins.py), every call logged in :attr:`log` (one
    rendering's; the renderer points it at a scratch log while it renders the sections only to
    reach their glance macros)."""

    def __init__(self, modules: Mapping[str, tuple[ModuleType, ...]], log: DecisionLog):
        self._modules = dict(modules)
        self.log = log

    def __getattr__(self, folder: str) -> _Folder:
        modules = self.__dict__.get("_modules", {})
        if folder not in modules:
            raise AttributeError(
                f"decide.{folder}: no measures folder's decide.py nor report section's joins.py"
            )
        return _Folder(self, folder, modules[folder])


class _Folder:
    """One folder's decisions as the template sees them (its decide.py, then its section's
    joins.py): their functions, each call logged."""

    def __init__(self, decided: Decided, folder: str, modules: tuple[ModuleType, ...]):
        self._decided, self._folder, self._modules = decided, folder, modules

    def __getattr__(self, name: str) -> Callable:
        owners = [module for module in self._modules if hasattr(module, name)]
        if not owners:
            names = ", ".join(module.__name__ for module in self._modules)
            raise AttributeError(f"decide.{self._folder}.{name}: no such function in {names}")
        function = getattr(owners[0], name)
        key = f"{self._folder}.{name}"

        def asked(*records, **given):  # the records positionally, the figures by name
            return self._decided.log.add(Decision(key, function(*records, **given), given))

        return asked
