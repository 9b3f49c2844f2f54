"""What kvbytes.json decides: the measured bytes against the formula. Pure Python, no torch."""

from __future__ import annotations

from mminfer.measures.kvbytes.kvbytes import KvBytes


def bytes_against_formula(kvbytes: KvBytes) -> str:
    """ "equal": the measured bytes are exactly the formula's; "differ": they are not."""
    if kvbytes.measured_bytes == kvbytes.formula_bytes:
        return "equal"
    return "differ"
