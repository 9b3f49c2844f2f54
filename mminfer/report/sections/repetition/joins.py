"""repetition.json beside temp.json: penalty 1.0 against the same temperature.

A join of two rules' records lives in its report section (.importlinter); pure Python, no torch.
"""

from __future__ import annotations

from mminfer.measures.repetition.repetition import Repetition
from mminfer.measures.temp.temp import Temperatures


def off_against_temp(repetition: Repetition, temp: Temperatures | None) -> str | None:
    """repetition.off_matches_temp: penalty 1.0's distinct answers against temp.json's at that
    temperature: "same", "differs"; None where either is missing."""
    off = repetition.penalties.get("1.0")
    row = None if temp is None else temp.get(repr(float(repetition.temperature)))
    if off is None or row is None:
        return None
    return "same" if off.distinct == row.distinct else "differs"
