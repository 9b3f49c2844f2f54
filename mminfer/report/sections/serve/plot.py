"""The serving batches' picture, drawn beside its section (over mminfer.report.drawing)."""

from __future__ import annotations

from pathlib import Path

from mminfer.measures.serve import decide as serve_decide
from mminfer.measures.serve.serve import Serve, ServeFit
from mminfer.records import rates
from mminfer.report import drawing
from mminfer.report.drawing import (
    error_bars,
    finish_axis,
    plain_log_labels,
    plt,
    spans_decades,
    ticker,
)


def serve_titles(serve: Serve) -> tuple[str, str]:
    """The serve picture's two titles, from the same predicates as the section's sentences
    (mminfer.measures.serve.decide: peak_of, growth_of, nearly_free_of, the passes' intervals):
    where tokens per second peak and how they grow per doubling, only what the passes decide;
    where batching is nearly free, if anywhere, and the table's verdict."""
    first = serve.batches[0].batch
    peak = serve_decide.peak_of(serve)
    speed = f"초당 토큰(중앙값)은 B = {serve.peak_batch}에서 가장 많다"
    if peak == "first":
        speed = f"초당 토큰은 가장 작은 배치 B = {first}에서 가장 많다"
    elif peak == "at":
        speed += f" (B = {first}의 {serve.peak_gain:.1f}배)"
    rate = f"{serve.growth_per_doubling:.0%}"
    growth = serve_decide.growth_of(serve)
    if growth == "stops":
        speed += f"\nB = {serve_decide.growth_stops_from(serve)}부터 두 배마다 +{rate} 미만"
    elif growth == "every":
        speed += f"\nB = {serve.batches[-1].batch}까지 두 배마다 +{rate} 넘게"
    elif growth == "mixed":
        steps = ", ".join(
            f"{a}→{b}" for a, b, found in serve_decide.growth_steps(serve, True) if found != "grew"
        )
        speed += f"\n두 배에 +{rate} 넘게 늘지 않은 곳: B {steps}"
    free = serve_decide.nearly_free_of(serve)
    if free == "up_to":
        step = f"B = {serve_decide.free_up_to(serve)}까지 거의 공짜"
    elif free == "not_free":
        step = (
            f"거의 공짜인 배치 없음: B = {first}부터 한 단계가 {serve.nearly_free:.0%} 넘게 늘었다"
        )
    else:
        step = f"패스 {serve.passes}번으로는 거의 공짜인지 가를 수 없다"
    step += f"\n판정 {serve.verdict} (패스 {serve.passes}번, 범위는 패스 사이)"
    return speed, step


def serve_bounds(serve: Serve) -> str:
    """The speed panel's legend title: the users by speed (≈ where an estimate, ≥ a lower bound)
    and by memory, and which binds, from the section's predicates (bound_of, speed_bound_of)."""
    users = serve.users
    by_speed = f"{users.users_by_speed:,}"
    if users.speed_how == "lower bound":
        by_speed = "≥ " + by_speed
    elif serve_decide.speed_bound_of(serve) in ("fit", "straddles"):
        by_speed = "≈ " + by_speed
    memory = "모름" if users.users_by_memory is None else f"{users.users_by_memory:,}"
    text = f"속도로 본 사용자: {by_speed}; 메모리로\n(사용자마다 {users.context:,}토큰): {memory}"
    text += {
        "memory": "; 메모리가 먼저 묶는다",
        "speed": "; 속도가 먼저 묶는다",
        "none": "; 어느 한계에도 닿지 않음",
    }.get(serve_decide.bound_of(serve), "")
    return text


def fitted_step_ms(fit: ServeFit, batch: int) -> float:
    """The fit's decode step at ``batch``, in milliseconds."""
    return (fit.fixed_s + fit.per_sequence_s * batch) * 1e3


def plot_serve(serve: Serve, out_png) -> Path:
    """Two panels against the batch size: tokens per second, and the decode step.

    Tokens per second of the machine and of each user, with their range over the passes, the peak
    and the per-user target; the decode step measured with its range, the fit (solid over the
    batches it was fitted on, dotted past them, dotted throughout where it does not hold), the
    cliffs, and the step the target allows. Log axes read in plain numbers. The bounds are written
    on the first panel.
    """
    rows = serve.batches
    batch = [row.batch for row in rows]
    users = serve.users
    fig, (speed_ax, step_ax) = plt.subplots(1, 2, figsize=(13, 5.2))
    series = (
        (
            "전체 사용자",
            [row.batch for row in rows],
            [row.tokens_per_second for row in rows],
            "o-",
            "tab:blue",
        ),
        (
            "사용자 한 명",
            [1] * len(rows),
            [row.per_user_tokens_per_second for row in rows],
            "s-",
            "tab:orange",
        ),
    )
    for name, users_in_step, speeds, style, color in series:
        # the record's tokens per second (users in a step over the step); its range from the
        # passes' slowest and fastest median step
        slowest = [rates.tokens_per_s(n, row.step_high_s) for n, row in zip(users_in_step, rows)]
        fastest = [rates.tokens_per_s(n, row.step_low_s) for n, row in zip(users_in_step, rows)]
        speed_ax.errorbar(
            batch,
            speeds,
            yerr=error_bars(speeds, slowest, fastest),
            fmt=style,
            color=color,
            capsize=3,
            label=f"초당 토큰, {name}",
        )
    speed_ax.plot(
        [serve.peak_batch],
        [serve.peak_tokens_per_second],
        "*",
        color="tab:green",
        markersize=14,
        label=f"정점: B = {serve.peak_batch}",
    )
    speed_ax.axhline(
        users.tokens_per_second,
        color="tab:red",
        linestyle=":",
        label=f"사용자당 목표 {users.tokens_per_second:g} 토큰/초",
    )
    bounds = serve_bounds(serve)
    step_ax.errorbar(
        batch,
        [row.decode_step_s * 1e3 for row in rows],
        yerr=error_bars(
            [row.decode_step_s * 1e3 for row in rows],
            [row.step_low_s * 1e3 for row in rows],
            [row.step_high_s * 1e3 for row in rows],
        ),
        fmt="o",
        color="tab:blue",
        capsize=3,
        label="디코드 한 단계, 잰 값 (중앙값; 패스 사이 범위)",
    )
    fit = serve.fit
    low, high = fit.fitted_batches
    inside = [b for b in batch if b <= high]
    beyond = [b for b in batch if b >= high]  # from the range's end, so the two lines join
    if fit.holds:
        inside_style = "-"
        label = f"적합: B와 무관한 몫 + 사용자당 × B (B {low}–{high}에서 맞음)"
    else:
        inside_style = ":"
        label = f"적합: B와 무관한 몫 + 사용자당 × B (B {low}–{high}에서 맞지 않음)"
    step_ax.plot(
        inside,
        [fitted_step_ms(fit, b) for b in inside],
        inside_style,
        color="tab:blue",
        label=label,
    )
    if len(beyond) > 1:
        step_ax.plot(
            beyond,
            [fitted_step_ms(fit, b) for b in beyond],
            ":",
            color="tab:blue",
            label=f"B {high} 너머의 적합 직선 (거기서는 맞추지 않음)",
        )
    by_batch = {row.batch: row for row in rows}
    for cliff in serve.cliffs:
        before = by_batch[cliff.from_batch]
        after = by_batch[cliff.to_batch]
        step_ax.plot(
            [before.batch, after.batch],
            [before.decode_step_s * 1e3, after.decode_step_s * 1e3],
            "-",
            color="tab:purple",
            linewidth=2.5,
            alpha=0.6,
        )
        step_ax.annotate(
            f"절벽: 배치 ×{cliff.batch_ratio:.0f}에 한 단계 ×{cliff.step_ratio:.1f}",
            (after.batch, after.decode_step_s * 1e3),
            textcoords="offset points",
            xytext=(-10, 6),
            ha="right",
            fontsize=8,
            color="tab:purple",
        )
    step_ax.axhline(
        users.step_target_s * 1e3,
        color="tab:red",
        linestyle=":",
        label="목표가 허용하는 한 단계",
    )
    for ax in (speed_ax, step_ax):
        if spans_decades(batch, factor=4.0):
            ax.set_xscale("log", base=2)
            ax.xaxis.set_major_formatter(ticker.FormatStrFormatter("%g"))
    speeds = [row.tokens_per_second for row in rows] + [users.tokens_per_second]
    if spans_decades(speeds):
        speed_ax.set_yscale("log")
        plain_log_labels(speed_ax.yaxis)
    steps = [row.decode_step_s for row in rows] + [users.step_target_s]
    if spans_decades(steps):
        step_ax.set_yscale("log")
        plain_log_labels(step_ax.yaxis)
    speed_title, step_title = serve_titles(serve)
    finish_axis(
        speed_ax,
        f"배치 B (프롬프트 {serve.prompt_len}토큰 뒤 함께 디코드하는 사용자)",
        "초당 토큰",
        speed_title,
        legend_title=bounds,
    )
    # the step grows with the batch, so its upper left corner stays clear of the points and the
    # fit; a cliff's note is written leftwards from the top, so then the lower right corner
    legend_corner = "lower right" if serve.cliffs else "upper left"
    finish_axis(
        step_ax,
        "배치 B (함께 디코드하는 사용자)",
        "디코드 한 단계 (ms)",
        step_title,
        loc=legend_corner,
    )
    return drawing.save_figure(fig, out_png)
