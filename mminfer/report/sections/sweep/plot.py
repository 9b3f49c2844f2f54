"""The sweep's picture, drawn beside its section (over mminfer.report.drawing)."""

from __future__ import annotations

from pathlib import Path

from mminfer.measures.sweep import decide as sweep_decide
from mminfer.measures.sweep.sweep import Sweep
from mminfer.report import drawing
from mminfer.report.drawing import (
    error_bars,
    finish_axis,
    plt,
    spans_decades,
    ticker,
)


def plot_sweep(sweep: Sweep, out_png) -> Path:
    """Three panels: the steps' times, the tokens fed per step, the ratios against N.

    The steps' times are drawn for both methods with their range over the runs, the fit dashed;
    uncached steps that were not clocked are on the fit, and, where the fit fails, on the line
    between the clocked steps either side (dotted). The ratio panel keeps every length that has a
    time, the filled ones marked.
    """
    steps, points = sweep.steps, sweep.points
    fig, (step_ax, fed_ax, ratio_ax) = plt.subplots(1, 3, figsize=(15, 4.6))
    methods = (
        ("with_cache", "o", "tab:blue", "P, 그 뒤 1"),
        ("without_cache", "s", "tab:orange", "P + i"),
    )
    names = {"with_cache": "캐시 사용", "without_cache": "캐시 미사용"}
    clocked_seconds = []
    for method, marker, color, fed_label in methods:
        name = names[method]
        measured = getattr(steps, f"{method}_s")
        fed = getattr(steps, f"fed_{method}")
        fitted = getattr(steps, f"fitted_{method}_s")
        low = getattr(steps, f"{method}_low_s")
        high = getattr(steps, f"{method}_high_s")
        clocked = [i for i, seconds in enumerate(measured) if seconds is not None]
        clocked_ms = [measured[i] * 1e3 for i in clocked]
        clocked_seconds += [measured[i] for i in clocked]
        label = f"{name} (잰 단계 {len(clocked)}/{len(measured)}; 실행 사이 범위)"
        step_ax.errorbar(
            clocked,
            clocked_ms,
            yerr=error_bars(
                clocked_ms, [low[i] * 1e3 for i in clocked], [high[i] * 1e3 for i in clocked]
            ),
            fmt=marker,
            color=color,
            markersize=2.5,
            alpha=0.6,
            elinewidth=0.8,
            label=label,
        )
        fitted_ms = [seconds * 1e3 for seconds in fitted]
        fit_label = f"적합, {name}"
        if not sweep.fit.holds:
            fit_label += " (맞지 않음)"
        step_ax.plot(
            range(len(fitted)), fitted_ms, "--", color=color, linewidth=1.2, label=fit_label
        )
        fed_ax.plot(
            clocked,
            [fed[i] for i in clocked],
            marker,
            color=color,
            markersize=2.5,
            label=f"{name}: {fed_label}",
        )
    between = [i for i, how in enumerate(steps.without_cache_how) if how == "interpolation"]
    if between:
        filled = steps.filled_without_cache_s
        step_ax.plot(
            between,
            [filled[i] * 1e3 for i in between],
            ":",
            marker=".",
            markersize=2,
            color="tab:orange",
            label="캐시 미사용, 잰 단계 사이 보간 (≈)",
        )
    if spans_decades(clocked_seconds):
        step_ax.set_yscale("log")
    finish_axis(
        step_ax,
        "단계 i (토큰 i를 생성)",
        "단계 시간 (ms)",
        f"P = {sweep.prompt_len}토큰 뒤 {sweep.longest}토큰 생성의 모든 단계\n"
        f"{sweep.runs}회의 중앙값; 판정 {sweep.verdict}",
    )
    fed_ax.set_yscale("log")
    finish_axis(fed_ax, "단계 i", "forward에 넣은 토큰", "잰 단계마다 넣은 토큰")

    shown = [point for point in points if point.time_ratio is not None]
    lengths = [point.new_tokens for point in shown]
    token_ratio = [point.token_ratio for point in shown]
    time_ratio = [point.time_ratio for point in shown]
    ratio_ax.plot(lengths, token_ratio, "o-", color="tab:green", label="토큰 비율 (미사용 / 사용)")
    ratio_ax.plot(lengths, time_ratio, "s-", color="tab:red", label="시간 비율 = speedup")
    filled_by = (
        ("fit", "s", "≈ 시간 비율, 캐시 없는 단계 일부를 적합으로"),
        ("interpolation", "D", "≈ 시간 비율, 캐시 없는 단계 일부를 보간으로"),
    )
    for how, marker, label in filled_by:
        filled = [point for point in shown if point.without_cache_from == how]
        if filled:
            ratio_ax.plot(
                [point.new_tokens for point in filled],
                [point.time_ratio for point in filled],
                marker,
                markerfacecolor="white",
                color="tab:red",
                label=label,
            )
    measured_rows = [row for row in sweep.predictions if row.measured and row.time_ratio]
    if measured_rows and sweep.fit.holds:
        ratio_ax.plot(
            [row.new_tokens for row in measured_rows],
            [row.time_ratio for row in measured_rows],
            "--",
            color="tab:red",
            alpha=0.6,
            label="≈ 적합에서 나온 시간 비율",
        )
    ratio_ax.axhline(1.0, color="gray", linewidth=0.8)
    if spans_decades(lengths, factor=4.0):  # base 2, labelled 8, 16, 32 rather than as powers
        ratio_ax.set_xscale("log", base=2)
        ratio_ax.xaxis.set_major_formatter(ticker.FormatStrFormatter("%g"))
    if spans_decades(token_ratio + time_ratio):
        ratio_ax.set_yscale("log")
    finish_axis(ratio_ax, "새 토큰 N", "캐시 미사용 / 캐시 사용", sweep_ratio_title(sweep))
    return drawing.save_figure(fig, out_png)


def sweep_ratio_title(sweep: Sweep) -> str:
    """The ratio panel's title: what the cache saves, and at the longest length the relation the
    section states (mminfer.measures.sweep.decide.time_against_tokens: the runs' interval), marked
    where its time is an estimate."""
    title = "캐시가 아끼는 것"
    n = sweep.points[-1].new_tokens
    mark = " (≈ 어림)" if sweep_decide.longest_estimate(sweep) else ""
    found = sweep_decide.time_against_tokens(sweep)
    if found == "below":
        title += f"\nN = {n}: 시간 비율이 토큰 비율에 못 미친다{mark}"
    elif found == "not_below":
        title += f"\nN = {n}: 시간 비율이 토큰 비율보다 크다{mark}"
    elif found == "undecided":
        title += f"\nN = {n}: 실행 {sweep.runs}회로는 시간 비율과 토큰 비율을 가를 수 없다"
    return title
