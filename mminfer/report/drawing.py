"""The pictures' floor: matplotlib on the Agg backend, the Korean font, and the helpers every
section's picture (mminfer/report/sections/<section>/plot.py) draws with; each PNG is written
atomically.
"""

from __future__ import annotations

import importlib.util
import unicodedata
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
from matplotlib import font_manager, ticker

from mminfer.io import atomic_writer


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
    """Lay ``fig`` out, save it as PNG through io.atomic_writer, then close it. Each section's
    plot.py calls it as ``drawing.save_figure``, so that a test or scripts/same_reports.py can
    put its own in its place and catch the figure."""
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


def plain_log_labels(axis) -> None:
    """Label a log axis's ticks as plain numbers (40, 0.5), not as powers (4x10^1); matplotlib
    still decides which of the minor ticks get a label."""
    axis.set_major_formatter(ticker.LogFormatter(labelOnlyBase=False))
    axis.set_minor_formatter(ticker.LogFormatter(labelOnlyBase=False))
