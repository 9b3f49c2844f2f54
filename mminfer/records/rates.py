"""Rates: a count over seconds, computed here and only here (STYLE.md: one number, one place).

Every rate a record holds (tokens a second, FLOPs a second, bytes a second, ops a second), the
seconds a count takes at a measured rate, and the units the report prints a rate in (GFLOP/s,
GB/s) are these functions; a measure, a record's facts, and the report's sections call
them and never divide by seconds themselves. A template prints the figure its facts hold.

The division is written once, in the order the records always used (``count / seconds``, not
``count * (1 / seconds)``), so a figure does not move in its last digit.

The edge cases, decided once for all of them:

- zero seconds: the count took less time than the clock tells apart, so the rate is unbounded:
  ``math.inf`` (JSON writes it ``Infinity``; the record keeps it rather than failing the run).
  Likewise zero rate in :func:`seconds_for`: the count never finishes, ``math.inf``.
- negative seconds or rate: a clock that ran backwards; ``None``: no measurement. Both are a bug
  of the caller, never a figure: :class:`ValueError`.

Pure Python, no torch: the records and the report import it.
"""

from __future__ import annotations

import math

GIGA = 1e9  # GFLOP/s and GB/s: a billion a second


def _checked(value: float | None, what: str) -> float:
    if value is None:
        raise ValueError(f"a rate needs {what}, got None")
    if value < 0:
        raise ValueError(f"a rate needs {what} >= 0, got {value!r}")
    return value


def per_s(count: float, seconds: float) -> float:
    """``count`` a second: count / seconds (math.inf at zero seconds)."""
    seconds = _checked(seconds, "seconds")
    if seconds == 0:
        return math.inf
    return count / seconds


def tokens_per_s(tokens: float, seconds: float) -> float:
    """Tokens a second: ``tokens`` generated (or decoded) in ``seconds``."""
    return per_s(tokens, seconds)


def flops_per_s(flops: float, seconds: float) -> float:
    """FLOPs a second: ``flops`` computed in ``seconds``."""
    return per_s(flops, seconds)


def bytes_per_s(nbytes: float, seconds: float) -> float:
    """Bytes a second: ``nbytes`` read and written in ``seconds``."""
    return per_s(nbytes, seconds)


def ops_per_s(ops: float, seconds: float) -> float:
    """Ops (dispatched kernels) a second: ``ops`` run in ``seconds``."""
    return per_s(ops, seconds)


def seconds_for(count: float, rate: float) -> float:
    """The seconds ``count`` takes at ``rate`` a second: count / rate (math.inf at zero rate).

    ``seconds_for(1, rate)`` is the seconds one takes: one op's cost, one token's step.
    """
    rate = _checked(rate, "a rate")
    if rate == 0:
        return math.inf
    return count / rate


def gflop_per_s(flops_a_second: float) -> float:
    """FLOPs a second in GFLOP/s, as the report prints it."""
    return flops_a_second / GIGA


def gb_per_s(bytes_a_second: float) -> float:
    """Bytes a second in GB/s (10^9 bytes), as the report prints it."""
    return bytes_a_second / GIGA
