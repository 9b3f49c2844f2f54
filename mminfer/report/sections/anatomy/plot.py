"""The anatomy's and the profile's pictures, drawn beside the section (over report.drawing)."""

from __future__ import annotations

from pathlib import Path

from mminfer.measures.anatomy.anatomy import (
    CATEGORIES,
    CATEGORY_WORDS,
    PATHS,
    REST,
    TERMS,
    Anatomy,
)
from mminfer.report import drawing
from mminfer.report.drawing import (
    finish_axis,
    plain_log_labels,
    plt,
    spans_decades,
    ticker,
)


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
    return drawing.save_figure(fig, out_png)


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
        return drawing.save_figure(fig, out_png)
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
    return drawing.save_figure(fig, out_png)
