"""The latency's picture, drawn beside its section (over mminfer.report.drawing)."""

from __future__ import annotations

from pathlib import Path

from mminfer.measures.time import decide as time_decide
from mminfer.measures.time.latency import Latency
from mminfer.report import drawing
from mminfer.report.drawing import (
    finish_axis,
    plain_log_labels,
    plt,
    spans_decades,
    ticker,
)


def plot_latency(latency: Latency, out_png) -> Path:
    """The gap before each new token against the step, both paths, with the interactive limit.

    Each path's median gap over the timed runs with the fastest and slowest run's as a band; the
    TTFT of each path written in the legend; MLPerf's interactive TPOT limit as a line, its source
    in the title's note. The uncached line is labelled by the tokens its steps feed.
    """
    fig, ax = plt.subplots(figsize=(9, 4.8))
    ways = (
        (latency.with_cache, "캐시 사용 (한 토큰씩)", "tab:blue"),
        (latency.without_cache, "캐시 미사용 (P + k 토큰씩)", "tab:orange"),
    )
    steps = list(range(2, len(latency.with_cache.step_gap_s) + 2))
    for path, name, color in ways:
        medians = [gap * 1e3 for gap in path.step_gap_s]
        ax.plot(steps, medians, "-", color=color, label=f"{name}, TTFT {path.ttft_s * 1e3:.1f} ms")
        ax.fill_between(
            steps,
            [gap * 1e3 for gap in path.step_gap_low_s],
            [gap * 1e3 for gap in path.step_gap_high_s],
            color=color,
            alpha=0.2,
            linewidth=0,
        )
    ax.axhline(
        latency.tpot_limit_s * 1e3,
        color="tab:red",
        linestyle="--",
        label=f"대화형 TPOT 한계 {latency.tpot_limit_s * 1e3:g} ms (p99)",
    )
    values = [gap for path, _, _ in ways for gap in path.step_gap_s]
    if spans_decades(values + [latency.tpot_limit_s]):
        ax.set_yscale("log")
        plain_log_labels(ax.yaxis)
    ax.xaxis.set_major_locator(ticker.MaxNLocator(integer=True))
    title = f"토큰 사이 간격 (스레드 {latency.threads}개, 판정 {latency.verdict})"
    if latency.verdict != "ok":
        title += ": 어림"
    elif time_decide.uncached_gap(latency, None) == "grows":  # time.uncached_gap's
        title += ": 캐시 없이는 문맥과 함께 는다"
    finish_axis(
        ax,
        "새 토큰 (k번째, 그 앞 토큰과의 간격)",
        "간격 (ms)",
        title,
        legend_title=f"한계: {latency.limits_source}",
    )
    return drawing.save_figure(fig, out_png)
