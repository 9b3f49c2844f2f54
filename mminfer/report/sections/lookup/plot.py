"""Prompt lookup's picture, drawn beside its section (over mminfer.report.drawing)."""

from __future__ import annotations

from pathlib import Path

from mminfer.measures.lookup.lookup import Lookup
from mminfer.report import drawing
from mminfer.report.drawing import (
    finish_axis,
    plt,
    ticker,
)

LOOKUP_CASES = {"validation": "검증 문서", "chat": "채팅 질문"}


def plot_lookup(lookup: Lookup, out_png) -> Path:
    """One panel per prompt: the share of verify calls that kept 0, 1, ..., K guesses, one bar
    group per number of guesses K, with each K's calls against the cached generate's N."""
    cases = list(lookup.cases.values())
    fig, axes = plt.subplots(1, len(cases), figsize=(6.5 * len(cases), 4.6), squeeze=False)
    width = 0.8 / len(lookup.guesses)
    for ax, case in zip(axes[0], cases):
        for index, guessing in enumerate(case.by_guesses):
            kept = guessing.accepted_per_call
            counts = [kept.count(n) for n in range(guessing.guesses + 1)]
            shares = [count / max(1, len(kept)) for count in counts]
            ax.bar(
                [n + (index - (len(case.by_guesses) - 1) / 2) * width for n in range(len(shares))],
                shares,
                width=width,
                label=f"K = {guessing.guesses}: 호출 {guessing.calls} (캐시 {case.calls_cached})",
            )
        ax.xaxis.set_major_locator(ticker.MaxNLocator(integer=True))
        ax.yaxis.set_major_formatter(ticker.PercentFormatter(1.0))
        finish_axis(
            ax,
            "검증 호출 한 번에 채택된 추측 수",
            "검증 호출의 몫",
            f"{LOOKUP_CASES[case.prompt]} (P = {case.prompt_len})",
        )
    return drawing.save_figure(fig, out_png)
