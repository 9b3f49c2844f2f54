"""Beyond the task: pictures of the results, each drawn from its record and saved as a PNG.

The sweep, where a step's time goes, the temperature answers, the top-p distributions, the
serving batches and the conversation's turns; each is written atomically.
"""

from __future__ import annotations

import importlib.util
import itertools
import math
import unicodedata
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
from matplotlib import font_manager, ticker

from mminfer.io import atomic_writer
from mminfer.measures.anatomy.anatomy import (
    CATEGORIES,
    CATEGORY_WORDS,
    PATHS,
    REST,
    TERMS,
    Anatomy,
)
from mminfer.measures.conversation import decide as conversation_decide
from mminfer.measures.conversation.conversation import Conversation
from mminfer.measures.lookup.lookup import Lookup
from mminfer.measures.serve import decide as serve_decide
from mminfer.measures.serve.serve import Serve, ServeFit
from mminfer.measures.sweep import decide as sweep_decide
from mminfer.measures.sweep.sweep import Sweep
from mminfer.measures.temp.temp import Temperatures
from mminfer.measures.time import decide as time_decide
from mminfer.measures.time.latency import Latency
from mminfer.measures.topp.topp import Position, TopPDetail
from mminfer.records import rates


def use_hangul_font() -> None:
    """Draw all text in koreanize-matplotlib's NanumGothic.

    The font is found without importing the package, whose import needs distutils.
    """
    spec = importlib.util.find_spec("koreanize_matplotlib")
    font = Path(spec.submodule_search_locations[0]) / "fonts" / "NanumGothic.ttf"
    font_manager.fontManager.addfont(str(font))
    matplotlib.rcParams["font.family"] = [
        font_manager.FontProperties(fname=str(font)).get_name(),
        "DejaVu Sans",
    ]
    matplotlib.rcParams["axes.unicode_minus"] = False  # NanumGothic has no U+2212 minus sign


use_hangul_font()


def clean_text(text: str, limit: int = 24) -> str:
    """The text as one short line, safe for matplotlib.

    Whitespace runs become one space, control characters go, text past ``limit`` is cut with '…',
    and '$' is escaped so that matplotlib does not read the text as mathtext.
    """
    kept = "".join(
        char for char in text if char.isspace() or unicodedata.category(char) not in ("Cc", "Cf")
    )
    line = " ".join(kept.split())
    if len(line) > limit:
        line = line[:limit].rstrip() + "…"
    return line.replace("$", r"\$")


def answer_label(answer: str) -> str:
    """The answer as one short line; '(빈 답)' for an empty one."""
    return clean_text(answer) or "(빈 답)"


def save_figure(fig, out_png) -> Path:
    """Lay ``fig`` out, save it as PNG through io.atomic_writer, then close it."""
    path = Path(out_png)
    # A log axis writes 10^{-2} in mathtext, in its labels' first font: DejaVu has the minus.
    for ax in fig.axes:
        ax.tick_params(
            which="both", labelfontfamily=["DejaVu Sans", *matplotlib.rcParams["font.family"]]
        )
    fig.tight_layout()
    try:
        with atomic_writer(path, binary=True) as handle:
            fig.savefig(handle, format="png", dpi=110)
    finally:
        plt.close(fig)
    return path


def spans_decades(values: list[float], factor: float = 10.0) -> bool:
    """Does a log axis help? All values positive, the largest ``factor`` times the smallest."""
    positive = [value for value in values if value is not None and value > 0]
    return (
        len(positive) == len(values) and len(values) > 1 and max(positive) >= factor * min(positive)
    )


def error_bars(centers: list[float], lows: list[float], highs: list[float]) -> list[list[float]]:
    """matplotlib's yerr for ranges [low, high] around ``centers``: the distances below and above,
    never negative."""
    below = [max(0.0, center - low) for center, low in zip(centers, lows)]
    above = [max(0.0, high - center) for center, high in zip(centers, highs)]
    return [below, above]


def finish_axis(
    ax, xlabel: str, ylabel: str, title: str, legend_title: str | None = None, loc: str = "best"
) -> None:
    """Label the panel and draw its legend (``legend_title`` on top of it: a note kept inside the
    legend's own box can never be covered by it) at ``loc``."""
    ax.set(xlabel=xlabel, ylabel=ylabel, title=title)
    legend = ax.legend(fontsize=8, title=legend_title, title_fontsize=8, loc=loc)
    if legend_title:
        legend.get_title().set_multialignment("left")
    ax.grid(True, alpha=0.3)


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
    return save_figure(fig, out_png)


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
    return save_figure(fig, out_png)


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
    return save_figure(fig, out_png)


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


def plain_log_labels(axis) -> None:
    """Label a log axis's ticks as plain numbers (40, 0.5), not as powers (4x10^1); matplotlib
    still decides which of the minor ticks get a label."""
    axis.set_major_formatter(ticker.LogFormatter(labelOnlyBase=False))
    axis.set_minor_formatter(ticker.LogFormatter(labelOnlyBase=False))


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
    return save_figure(fig, out_png)


def plot_conversation(conversation: Conversation, out_png) -> Path:
    """Two panels against the turn: the tokens fed, and the time to first token, both ways.

    Tokens fed by every forward call of the turn's answer, recompute and carry, with the tokens the
    carried cache reused; the time to first token as the median with the range of the timed runs
    (turns that reused nothing were not timed), each turn's verdict written beside it.
    """
    turns = conversation.turns
    numbers = [turn.turn for turn in turns]
    fig, (fed_ax, time_ax) = plt.subplots(1, 2, figsize=(13, 4.8))
    fed_ax.plot(
        numbers,
        [turn.fed_recompute for turn in turns],
        "s-",
        color="tab:orange",
        label="다시 계산 (recompute): P + (N - 1)",
    )
    fed_ax.plot(
        numbers,
        [turn.fed_carry for turn in turns],
        "o-",
        color="tab:blue",
        label="이어 쓰기 (carry): (P - R) + (N - 1)",
    )
    fed_ax.plot(
        numbers,
        [turn.reused for turn in turns],
        ":",
        color="tab:green",
        label="이어 쓴 캐시에서 재사용 (R)",
    )
    fed_ax.xaxis.set_major_locator(ticker.MaxNLocator(integer=True))
    finish_axis(
        fed_ax,
        "턴",
        "forward에 넣은 토큰",
        f"턴마다 넣은 토큰: 모두 다시 계산 {conversation.total_fed_recompute:,}, "
        f"이어 쓰기 {conversation.total_fed_carry:,}",
    )
    timed = [turn for turn in turns if turn.timing is not None]
    ways = (
        ("recompute", "다시 계산", "s-", "tab:orange"),
        ("carry", "이어 쓰기", "o-", "tab:blue"),
    )
    for way, name, style, color in ways:
        medians = [getattr(turn.timing, f"{way}_s") * 1e3 for turn in timed]
        runs = [getattr(turn.timing, f"{way}_runs_s") for turn in timed]
        lows = [min(each) * 1e3 for each in runs]
        highs = [max(each) * 1e3 for each in runs]
        time_ax.errorbar(
            [turn.turn for turn in timed],
            medians,
            yerr=error_bars(medians, lows, highs),
            fmt=style,
            color=color,
            capsize=3,
            label=f"{name} (중앙값, 실행 범위)",
        )
    for turn in timed:
        time_ax.annotate(
            turn.timing.verdict,
            (turn.turn, turn.timing.recompute_s * 1e3),
            textcoords="offset points",
            xytext=(4, 6),
            fontsize=8,
        )
    time_ax.xaxis.set_major_locator(ticker.MaxNLocator(integer=True))
    time_title = (
        f"첫 토큰까지 시간 (스레드 {conversation.threads}개, 판정 {conversation.timing_verdict})"
    )
    # an estimate where a verdict is not ok, or a shorter prompt took longer (the section's claim)
    machine = conversation_decide.falls_as_prompt_grows(conversation)
    if conversation.timing_verdict not in ("ok", "none") or machine:
        time_title += ": 어림"
    finish_axis(time_ax, "턴", "첫 토큰까지 시간 (ms)", time_title)
    return save_figure(fig, out_png)


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
    elif time_decide.uncached_gap(latency, None) == "grows":  # the sentence latency.uncached_gap's
        title += ": 캐시 없이는 문맥과 함께 는다"
    finish_axis(
        ax,
        "새 토큰 (k번째, 그 앞 토큰과의 간격)",
        "간격 (ms)",
        title,
        legend_title=f"한계: {latency.limits_source}",
    )
    return save_figure(fig, out_png)


def plot_anatomy(anatomy: Anatomy, out_png) -> Path:
    """Two panels: each path's modeled terms in seconds (an op's dispatch times the kernels, the
    FLOPs at the matmul ceiling, the bytes at the path's bandwidth), and each call's FLOPs.

    Drawn from anatomy.json alone (time.json's medians are set beside them in the report), so
    that re-timing redraws nothing.
    """
    fig, (terms_ax, calls_ax) = plt.subplots(1, 2, figsize=(12, 4.6))
    names = {"with_cache": "캐시 사용", "without_cache": "캐시 미사용"}
    words = {"dispatch": "디스패치", "arithmetic": "연산", "memory": "메모리"}
    colors = {"dispatch": "tab:gray", "arithmetic": "tab:blue", "memory": "tab:green"}
    width = 0.25
    values = []
    for index, path in enumerate(PATHS):
        seconds = anatomy.modeled_terms(path)
        for offset, term in enumerate(TERMS):
            values.append(seconds[term])
            terms_ax.bar(
                index + (offset - 1) * width,
                seconds[term] * 1e3,
                width,
                color=colors[term],
                label=words[term] if index == 0 else None,
            )
    terms_ax.set_xticks(range(len(PATHS)), [names[path] for path in PATHS])
    if spans_decades(values):
        terms_ax.set_yscale("log")
        plain_log_labels(terms_ax.yaxis)
    finish_axis(
        terms_ax,
        "경로",
        "모형의 시간 (ms)",
        f"호출 {anatomy.new_tokens}회의 세 항 (스레드 {anatomy.threads}개)",
        legend_title="잰 시간과의 비교는 report.md",
    )
    for path, marker, color in (
        ("with_cache", "o", "tab:blue"),
        ("without_cache", "s", "tab:orange"),
    ):
        flops = [step.flops_formula for step in anatomy.path(path).steps]
        calls_ax.plot(
            range(1, len(flops) + 1), flops, marker=marker, color=color, label=names[path]
        )
    calls_ax.set_yscale("log")
    calls_ax.xaxis.set_major_locator(ticker.MaxNLocator(integer=True))
    finish_axis(
        calls_ax,
        "forward 호출 (k번째)",
        "FLOPs (공식)",
        f"호출마다의 FLOPs (P = {anatomy.prompt_len}, N = {anatomy.new_tokens})",
    )
    return save_figure(fig, out_png)


def plot_profile(anatomy: Anatomy, out_png) -> Path:
    """One stacked bar per path: its generate under torch.profiler, parted into the categories'
    medians (leaf ops' self time within each scope) and the rest (Python and the framework
    between ops), each a share of their sum, so that a bar adds up to 100 % (medians over the
    rounds do not add up to the wall's median: the title gives it); drawn from anatomy.json
    alone. Without a profile (an anatomy.json of an earlier version) the panel says so."""
    fig, ax = plt.subplots(figsize=(10, 3.6))
    names = {"with_cache": "캐시 사용", "without_cache": "캐시 미사용"}
    if not anatomy.profile:
        ax.text(0.5, 0.5, "anatomy.json에 프로파일이 없다", ha="center", va="center")
        ax.set_axis_off()
        return save_figure(fig, out_png)
    colors = plt.get_cmap("tab10").colors
    keys = [*CATEGORIES, REST]
    for row, path in enumerate(PATHS):
        profile = anatomy.profile[path]
        total = sum(profile.parts_s[key] for key in keys)
        left = 0.0
        for index, key in enumerate(keys):
            share = profile.parts_s[key] / total if total > 0 else 0.0
            ax.barh(
                row,
                100 * share,
                left=100 * left,
                color="lightgray" if key == REST else colors[index % len(colors)],
                label=CATEGORY_WORDS[key] if row == 0 else None,
            )
            left += share
    ax.set_yticks(range(len(PATHS)), [names[path] for path in PATHS])
    ax.invert_yaxis()
    walls = ", ".join(f"{names[p]} {anatomy.profile[p].wall_s * 1000:.0f} ms" for p in PATHS)
    ax.set(
        xlabel="부분의 몫 (%, 부분마다 라운드의 중앙값, 합이 100)",
        ylabel="경로",
        title=f"torch.profiler로 본 생성 (N = {anatomy.new_tokens}; 벽시계 {walls})",
    )
    ax.grid(True, axis="x", alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", title="부분")
    return save_figure(fig, out_png)


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
    return save_figure(fig, out_png)
