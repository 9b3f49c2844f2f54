"""The temperature answers' picture, drawn beside its section (over mminfer.report.drawing)."""

from __future__ import annotations

from pathlib import Path

from mminfer.measures.temp.temp import Temperatures
from mminfer.report import drawing
from mminfer.report.drawing import (
    answer_label,
    plt,
)


def plot_temp(temp: Temperatures, out_png, top: int = 10) -> Path:
    """Two panels: distinct answers per temperature, and the most common answers.

    The ``top`` most common answers are those of the lowest temperature (temp.json's keys are its
    temperatures, lowest first).
    """
    keys = list(temp)
    fig, (distinct_ax, answers_ax) = plt.subplots(
        1, 2, figsize=(13, 4.8), gridspec_kw={"width_ratios": [1, 1.6]}
    )
    positions = list(range(len(keys)))
    bars = distinct_ax.bar(positions, [temp[key].distinct for key in keys], color="tab:purple")
    distinct_ax.bar_label(
        bars, [f"{temp[key].distinct}/{temp[key].samples}" for key in keys], fontsize=9
    )
    distinct_ax.set_ylim(0, max(temp[key].samples for key in keys) * 1.1)
    distinct_ax.set_xticks(positions, [f"T={key}" for key in keys])
    distinct_ax.set(ylabel="서로 다른 답 (distinct)", title="온도별 서로 다른 답의 수")
    distinct_ax.grid(True, axis="y", alpha=0.3)

    lowest = temp[keys[0]]
    answers = lowest.answers[:top]
    counts = [item.count for item in answers]
    rows = list(range(len(answers)))
    bars = answers_ax.barh(rows, counts, color="tab:purple", alpha=0.8)
    answers_ax.bar_label(bars, [str(count) for count in counts], padding=3, fontsize=8)
    answers_ax.set_yticks(rows, [answer_label(item.answer) for item in answers], fontsize=8)
    answers_ax.invert_yaxis()  # the most common answer on top
    answers_ax.set(xlabel="나온 횟수", xlim=(0, max(counts) * 1.15))
    answers_ax.set_title(
        f"T={keys[0]}에서 가장 흔한 답 "
        f"(샘플 {lowest.samples}개 중 서로 다른 답 {lowest.distinct}개)"
    )
    answers_ax.grid(True, axis="x", alpha=0.3)
    return drawing.save_figure(fig, out_png)
