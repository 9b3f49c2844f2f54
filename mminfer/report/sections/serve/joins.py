"""serve.json beside sweep.json: the load named as a cause, and the two prefills.

A join of two rules' records lives in its report section (.importlinter); pure Python, no torch.
"""

from __future__ import annotations

from mminfer.measures.serve.serve import Serve
from mminfer.measures.sweep.sweep import Sweep
from mminfer.records.machine import busy_alone
from mminfer.records.reconcile import reconcile


def load_against_sweep(serve: Serve, sweep: Sweep | None) -> str | None:
    """serve.load_against_sweep: "serve" or "sweep", the one of the two that alone ran busy (a
    load named as the cause of their difference); None where both or neither did."""
    return busy_alone(serve, sweep, ("serve", "sweep"))


def prefill_against_sweep(serve: Serve, sweep: Sweep | None) -> str | None:
    """Serve's B = 1 prefill beside sweep.json's time to first token, the same forward of the
    same prompt timed by two jobs (mminfer.records.reconcile): "overlap", "apart" or
    "undecided". None where the two did not measure the same prefill."""
    first = serve.batches[0]
    if sweep is None or first.batch != 1 or first.prefill_interval is None:
        return None
    if sweep.prompt_len != serve.prompt_len:
        return None
    return reconcile(first.prefill_interval, sweep.ttft_interval)
