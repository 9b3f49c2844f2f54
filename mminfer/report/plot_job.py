"""The rule of rules/plots.smk: a picture drawn from the result file beside it."""

from __future__ import annotations

import logging

from mminfer.measurements import drawing, read_result

log = logging.getLogger("mminfer")


def plot_job(kind: str, source, out):
    """One PNG: ``kind`` is a picture of mminfer.measurements, drawn from its JSON file."""
    path = drawing(kind)(read_result(source), out)
    log.info("drew %s from %s", out, source)
    return path
