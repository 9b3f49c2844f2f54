"""The top-p distributions' picture, drawn beside its section (over mminfer.report.drawing)."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

from mminfer.measures.topp.topp import Position, TopPDetail
from mminfer.report import drawing
from mminfer.report.drawing import (
    clean_text,
    plt,
)


def survivors_at(position: Position, p: float) -> int | None:
    """The survivor count at ``p`` (keys are written as repr(float(p)): "0.5", "0.9", "0.99")."""
    for key, count in position.survivors.items():
        if math.isclose(float(key), p):
            return count
    return None


def plot_topp(detail: TopPDetail, out_png) -> Path:
    """One panel per position: sorted probabilities, their cumulative mass, what each p keeps."""
    positions = detail.positions
    ps = [float(p) for p in detail.ps]
    colors = ["tab:green", "tab:orange", "tab:red", "tab:purple", "tab:brown", "tab:pink"]
    fig, axes = plt.subplots(1, len(positions), figsize=(6.5 * len(positions), 4.8), squeeze=False)
    for ax, position in zip(axes[0], positions.values()):
        probs = position.sorted_probs
        ranks = list(range(1, len(probs) + 1))
        ax.plot(ranks, probs, color="tab:blue", label="확률 (내림차순)")
        ax.set(xscale="log", yscale="log", xlabel="후보 토큰의 순위")
        ax.set_ylabel("확률", color="tab:blue")

        mass_ax = ax.twinx()
        mass_ax.plot(
            ranks,
            list(itertools.accumulate(probs)),
            color="black",
            linewidth=1.2,
            label="누적 확률",
        )
        mass_ax.set(ylim=(0, 1.02), ylabel="누적 확률")
        largest = len(probs)
        for index, p in enumerate(ps):
            color = colors[index % len(colors)]
            mass_ax.axhline(p, color=color, linestyle=":", linewidth=1)
            kept = survivors_at(position, p)
            if kept is not None:
                ax.axvline(
                    kept,
                    color=color,
                    linestyle="--",
                    linewidth=1.2,
                    label=f"p={p:g}: {kept}개 남음",
                )
                largest = max(largest, kept)
        ax.set_xlim(0.8, largest * 1.3)
        ax.set_title(
            f"[bos]{clean_text(position.prefix)} 뒤, 엔트로피 {position.entropy_bits:.2f}비트"
        )
        handles, labels = ax.get_legend_handles_labels()
        mass_handles, mass_labels = mass_ax.get_legend_handles_labels()
        ax.legend(handles + mass_handles, labels + mass_labels, fontsize=8, loc="lower left")
        ax.grid(True, alpha=0.3)
        if largest > len(probs):
            ax.annotate(
                f"확률은 상위 {len(probs)}개만 저장됨",
                (0.98, 0.98),
                xycoords="axes fraction",
                ha="right",
                va="top",
                fontsize=8,
            )
    return drawing.save_figure(fig, out_png)
