"""The rule of rules/plots.smk: a picture drawn from the result file beside it."""

from __future__ import annotations

import logging

from mminfer import plots
from mminfer.measurements import read_result

log = logging.getLogger("mminfer")

DRAW = {
    "sweep": plots.plot_sweep,
    "temp": plots.plot_temp,
    "topp": plots.plot_topp,
    "serve": plots.plot_serve,
}


def plot_job(kind: str, source, out):
    """One PNG: kind is a picture of mminfer.measurements.pictures, drawn from its JSON file."""
    path = DRAW[kind](read_result(source), out)
    log.info("drew %s from %s", out, source)
    return path
