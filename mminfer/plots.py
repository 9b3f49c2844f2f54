"""Beyond the task: figures of the sweep, the temperature answers and the top-p distributions.

Each ``plot_*`` function takes a result exactly as it is written to disk (the JSON's dict), draws with
matplotlib's non-interactive Agg backend, and saves a PNG atomically (a temporary file in the same
folder, then ``os.replace``). Every plotted number comes from the dict passed in.

Korean text (answers, prefixes): matplotlib's default DejaVu Sans has no Hangul. :func:`hangul_font`
looks for an installed font that has it (matplotlib's font list and ``fc-list :lang=ko``; matplotlib's
own "Last Resort" font, which maps every character to a placeholder box, does not count). Text is
drawn only if every character has a glyph in DejaVu Sans or that font; otherwise an answer is labelled
by its rank alone ("#1") and a prefix by its position's name, so no missing-glyph warning is raised.
"""

from __future__ import annotations

import functools
import logging
import math
import shutil
import subprocess
import unicodedata
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)
from matplotlib import font_manager, ticker  # noqa: E402
from matplotlib.ft2font import FT2Font  # noqa: E402

from mminfer.io import atomic_writer  # noqa: E402

DEFAULT_FONT = "DejaVu Sans"
HANGUL_PROBE = "가각힣한글민수는"  # syllables from both ends of the block and a few common ones
LABEL_CHARS = 24  # answers longer than this are cut, with an ellipsis
WITH_CACHE_COLOR = "tab:blue"
WITHOUT_CACHE_COLOR = "tab:orange"


# --- fonts ---------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def font_charmap(path: str) -> frozenset:
    """The code points a font file has glyphs for (empty if it cannot be read)."""
    try:
        return frozenset(FT2Font(path).get_charmap())
    except (OSError, RuntimeError, ValueError):
        return frozenset()


def fc_list_korean_fonts() -> list[str]:
    """Font files fontconfig says cover Korean (``fc-list :lang=ko file``); [] without fc-list."""
    if shutil.which("fc-list") is None:
        return []
    try:
        output = subprocess.run(["fc-list", ":lang=ko", "file"], capture_output=True, text=True, timeout=20,
                                check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    paths = []
    for line in output.splitlines():
        path = line.strip().rstrip(":").strip()
        if path:
            paths.append(path)
    return sorted(paths)


@functools.lru_cache(maxsize=1)
def hangul_font() -> str | None:
    """The family name of an installed font with Hangul glyphs, or None. Looks at matplotlib's font list
    and at the files of ``fc-list :lang=ko`` (added to matplotlib's list: its cache may predate them),
    skipping matplotlib's "Last Resort" placeholder font."""
    for path in fc_list_korean_fonts():
        try:
            font_manager.fontManager.addfont(path)
        except (OSError, RuntimeError, ValueError):
            continue
    entries = sorted(font_manager.fontManager.ttflist, key=lambda entry: (entry.name, entry.fname))
    for entry in entries:
        if "last resort" in entry.name.lower():
            continue
        charmap = font_charmap(entry.fname)
        if all(ord(char) in charmap for char in HANGUL_PROBE):
            return entry.name
    return None


@functools.lru_cache(maxsize=1)
def text_fonts() -> tuple[list[str], frozenset]:
    """(font families to draw text with, the code points they cover together)."""
    families = []
    covered = set()
    korean = hangul_font()
    if korean is not None:
        families.append(korean)
    families.append(DEFAULT_FONT)
    for family in list(families):
        try:
            path = font_manager.findfont(font_manager.FontProperties(family=family), fallback_to_default=False)
        except ValueError:
            families.remove(family)
            continue
        covered |= font_charmap(path)
    return families or [DEFAULT_FONT], frozenset(covered)


def clean_text(text: str, limit: int = LABEL_CHARS) -> str:
    """One line: whitespace runs become one space, control characters go, long text is cut with '…',
    and '$' is escaped so that matplotlib does not read the text as mathtext."""
    characters = []
    for char in text:
        if char.isspace():
            char = " "
        elif unicodedata.category(char) in ("Cc", "Cf"):
            continue
        if char == " " and characters and characters[-1] == " ":
            continue
        characters.append(char)
    line = "".join(characters).strip()
    if len(line) > limit:
        line = line[:limit].rstrip() + "…"
    return line.replace("$", r"\$")


def drawable(text: str, covered: frozenset) -> bool:
    """True if every character of ``text`` has a glyph in the fonts covering ``covered``."""
    return all(ord(char) in covered for char in text.replace("\\$", "$"))


def answer_label(rank: int, answer: str, covered: frozenset) -> str:
    """'#rank text' when the text can be drawn, '#rank' alone when it cannot, '#rank (empty)' for ''."""
    text = clean_text(answer)
    if not text:
        return f"#{rank} (empty)"
    if drawable(text, covered):
        return f"#{rank} {text}"
    return f"#{rank}"


# --- saving --------------------------------------------------------------------------------------------

def save_figure(fig, out_png) -> Path:
    """Save ``fig`` as PNG through a temporary file beside ``out_png`` (io.atomic_writer: the mode a
    plain open gives), then close it."""
    path = Path(out_png)
    try:
        with atomic_writer(path, binary=True) as handle:
            fig.savefig(handle, format="png", dpi=110)
    finally:
        plt.close(fig)
    return path


def log2_lengths_axis(ax) -> None:
    """A base-2 log x axis labelled with plain numbers (8, 16, 32) rather than powers."""
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(ticker.ScalarFormatter())


def spans_decades(values: list[float], factor: float = 10.0) -> bool:
    """True if all values are positive and the largest is at least ``factor`` times the smallest:
    then a log axis helps."""
    positive = [value for value in values if value is not None and value > 0]
    return len(positive) == len(values) and len(values) > 1 and max(positive) >= factor * min(positive)


# --- the sweep -----------------------------------------------------------------------------------------

def fitted_times(cost: dict | None, steps: list[int], fed: list[int]) -> list[float] | None:
    """steps x fixed_s_per_step + fed x per_token_s at each point, or None without a fitted pair."""
    if not cost or cost.get("fixed_s_per_step") is None or cost.get("per_token_s") is None:
        return None
    return [n * cost["fixed_s_per_step"] + f * cost["per_token_s"] for n, f in zip(steps, fed)]


def finish_length_axis(ax, title: str, ylabel: str, log_x: bool, log_y: bool) -> None:
    """Labels, scales, legend and grid of one sweep panel (x is the generation length N)."""
    ax.set_xlabel("new tokens N")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    if log_x:
        log2_lengths_axis(ax)
    if log_y:
        ax.set_yscale("log")
    ax.legend(fontsize=8)
    ax.grid(True, alpha=0.3)


def plot_sweep(sweep: dict, out_png) -> Path:
    """Three panels against the generation length N: time of both methods (with the fitted cost model
    dashed and the time to first token dotted), tokens fed into forward (log y), and the token ratio
    beside the time ratio (measured, and predicted by the fit where there is one)."""
    points = sweep["points"]
    lengths = [point["new_tokens"] for point in points]
    with_s = [point["with_cache_s"] for point in points]
    without_s = [point["without_cache_s"] for point in points]
    fed_with = [point["fed_with_cache"] for point in points]
    fed_without = [point["fed_without_cache"] for point in points]
    log_x = spans_decades(lengths, factor=4.0)

    fig, (time_ax, fed_ax, ratio_ax) = plt.subplots(1, 3, figsize=(15, 4.6))

    time_ax.plot(lengths, with_s, "o-", color=WITH_CACHE_COLOR, label="with cache")
    time_ax.plot(lengths, without_s, "s-", color=WITHOUT_CACHE_COLOR, label="without cache")
    fit = sweep.get("fit") or {}
    for method, fed, color in (("with_cache", fed_with, WITH_CACHE_COLOR),
                               ("without_cache", fed_without, WITHOUT_CACHE_COLOR)):
        predicted = fitted_times(fit.get(method), lengths, fed)
        if predicted is not None:
            cost = fit[method]
            label = (f"fit: {cost['fixed_s_per_step'] * 1e3:.3g} ms/step + "
                     f"{cost['per_token_s'] * 1e6:.3g} us/token")
            time_ax.plot(lengths, predicted, "--", color=color, alpha=0.7, label=label)
    if sweep.get("ttft_s") is not None:
        time_ax.axhline(sweep["ttft_s"], color="gray", linestyle=":",
                        label=f"time to first token {sweep['ttft_s'] * 1e3:.3g} ms")
    finish_length_axis(time_ax, f"time after a {sweep['prompt_len']}-token prompt", "generation time (s, median)",
                       log_x, spans_decades(with_s + without_s))

    fed_ax.plot(lengths, fed_with, "o-", color=WITH_CACHE_COLOR, label="with cache: P + N - 1")
    fed_ax.plot(lengths, fed_without, "s-", color=WITHOUT_CACHE_COLOR, label="without cache: NP + N(N-1)/2")
    finish_length_axis(fed_ax, "tokens fed", "tokens fed into forward", log_x, True)

    token_ratio = [point["token_ratio"] for point in points]
    time_ratio = [point["time_ratio"] for point in points]
    ratio_ax.plot(lengths, token_ratio, "o-", color="tab:green", label="token ratio (without / with)")
    ratio_ax.plot(lengths, time_ratio, "s-", color="tab:red", label="time ratio = speedup")
    approach = sweep.get("approach") or {}
    curve = [row for row in approach.get("curve") or [] if min(lengths) <= row["new_tokens"] <= max(lengths)]
    if curve:
        ratio_ax.plot([row["new_tokens"] for row in curve], [row["predicted_time_ratio"] for row in curve],
                      "--", color="tab:red", alpha=0.6, label=f"time ratio predicted ({approach['costs_from']} fit)")
    ratio_ax.axhline(1.0, color="gray", linewidth=0.8)
    finish_length_axis(ratio_ax, "what the cache saves", "without cache / with cache", log_x,
                       spans_decades(token_ratio + time_ratio))

    fig.tight_layout()
    return save_figure(fig, out_png)


# --- temperature ---------------------------------------------------------------------------------------

def temperature_entries(temp: dict) -> list[tuple[float, str, dict]]:
    """(temperature, key, summary) for every key of temp.json that is a number, lowest first."""
    entries = []
    for key, summary in temp.items():
        try:
            temperature = float(key)
        except ValueError:
            continue
        if isinstance(summary, dict) and "distinct" in summary:
            entries.append((temperature, key, summary))
    return sorted(entries, key=lambda entry: entry[0])


def plot_temp(temp: dict, out_png, top: int = 10) -> Path:
    """Two panels: distinct answers per temperature (bars, out of the samples), and the ``top`` most
    common answers at the lowest temperature (horizontal bars of their counts)."""
    entries = temperature_entries(temp)
    if not entries:
        raise ValueError("temp.json has no temperature entries")
    families, covered = text_fonts()

    fig, (distinct_ax, answers_ax) = plt.subplots(1, 2, figsize=(13, 4.8),
                                                  gridspec_kw={"width_ratios": [1, 1.6]})

    keys = [key for _, key, _ in entries]
    distinct = [summary["distinct"] for _, _, summary in entries]
    positions = list(range(len(entries)))
    bars = distinct_ax.bar(positions, distinct, color="tab:purple")
    for bar, (_, _, summary) in zip(bars, entries):
        samples = summary.get("samples")
        text = f"{summary['distinct']}/{samples}" if samples is not None else f"{summary['distinct']}"
        distinct_ax.annotate(text, (bar.get_x() + bar.get_width() / 2, bar.get_height()), ha="center",
                             va="bottom", fontsize=9)
    samples_known = [summary["samples"] for _, _, summary in entries if summary.get("samples") is not None]
    if samples_known:
        distinct_ax.set_ylim(0, max(samples_known) * 1.1)
    distinct_ax.set_xticks(positions, [f"T={key}" for key in keys])
    distinct_ax.set_ylabel("distinct answers")
    distinct_ax.set_title("distinct answers per temperature")
    distinct_ax.grid(True, axis="y", alpha=0.3)

    lowest_temperature, lowest_key, lowest = entries[0]
    answers = (lowest.get("answers") or [])[:top]
    if answers:
        labels = [answer_label(rank, item["answer"], covered) for rank, item in enumerate(answers, start=1)]
        counts = [item["count"] for item in answers]
        rows = list(range(len(answers)))
        answers_ax.barh(rows, counts, color="tab:purple", alpha=0.8)
        answers_ax.set_yticks(rows, labels, fontfamily=families, fontsize=8)
        answers_ax.invert_yaxis()  # the most common answer on top
        for row, count in zip(rows, counts):
            answers_ax.annotate(str(count), (count, row), xytext=(3, 0), textcoords="offset points",
                                va="center", fontsize=8)
        answers_ax.set_xlabel("count")
        answers_ax.set_xlim(0, max(counts) * 1.15)
    else:
        answers_ax.text(0.5, 0.5, "no answers recorded", ha="center", va="center", transform=answers_ax.transAxes)
        answers_ax.set_yticks([])
    samples = lowest.get("samples")
    of_samples = f" of {samples} samples" if samples is not None else ""
    answers_ax.set_title(f"most common answers at T={lowest_key} ({lowest['distinct']} distinct{of_samples})")
    answers_ax.grid(True, axis="x", alpha=0.3)

    fig.tight_layout()
    return save_figure(fig, out_png)


# --- top-p ---------------------------------------------------------------------------------------------

def survivors_at(position: dict, p: float) -> int | None:
    """The survivor count at ``p`` (keys are written as repr(float(p)): "0.5", "0.9", "0.99")."""
    survivors = position.get("survivors") or {}
    if repr(float(p)) in survivors:
        return survivors[repr(float(p))]
    for key, count in survivors.items():
        if math.isclose(float(key), p):
            return count
    return None


def cumulative(values: list[float]) -> list[float]:
    total = 0.0
    sums = []
    for value in values:
        total += value
        sums.append(total)
    return sums


def plot_topp(detail: dict, out_png) -> Path:
    """One panel per position: the next-token probabilities sorted descending (log-log, left axis),
    their cumulative mass (right axis), a horizontal line at each p and a vertical line at the number of
    tokens MiniMind's top-p rule keeps at that p. Only the stored top probabilities are drawn."""
    positions = detail["positions"]
    ps = [float(p) for p in detail["ps"]]
    families, covered = text_fonts()
    colors = ["tab:green", "tab:orange", "tab:red", "tab:purple", "tab:brown", "tab:pink"]

    fig, axes = plt.subplots(1, len(positions), figsize=(6.5 * len(positions), 4.8), squeeze=False)
    for ax, (name, position) in zip(axes[0], positions.items()):
        probs = position["sorted_probs"]
        ranks = list(range(1, len(probs) + 1))
        ax.plot(ranks, probs, color="tab:blue", label="probability (sorted)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("rank of the candidate token")
        ax.set_ylabel("probability", color="tab:blue")

        mass_ax = ax.twinx()
        mass_ax.plot(ranks, cumulative(probs), color="black", linewidth=1.2, label="cumulative mass")
        mass_ax.set_ylim(0, 1.02)
        mass_ax.set_ylabel("cumulative probability")

        largest = len(probs)
        for index, p in enumerate(ps):
            color = colors[index % len(colors)]
            mass_ax.axhline(p, color=color, linestyle=":", linewidth=1)
            kept = survivors_at(position, p)
            if kept is not None:
                ax.axvline(kept, color=color, linestyle="--", linewidth=1.2, label=f"p={p:g}: {kept} kept")
                largest = max(largest, kept)
        ax.set_xlim(0.8, largest * 1.3)

        prefix = clean_text(position.get("prefix", ""))
        shown = f"[bos]{prefix}" if prefix and drawable(prefix, covered) else f"the {name} position"
        entropy = position.get("entropy_bits")
        entropy_text = f", entropy {entropy:.2f} bits" if entropy is not None else ""
        ax.set_title(f"after {shown}{entropy_text}", fontfamily=families)

        handles, labels = ax.get_legend_handles_labels()
        mass_handles, mass_labels = mass_ax.get_legend_handles_labels()
        ax.legend(handles + mass_handles, labels + mass_labels, fontsize=8, loc="lower left")
        ax.grid(True, alpha=0.3)
        if largest > len(probs):
            ax.annotate(f"probabilities stored for the top {len(probs)} only", (0.98, 0.98),
                        xycoords="axes fraction", ha="right", va="top", fontsize=8)

    fig.tight_layout()
    return save_figure(fig, out_png)


PLOTS = {"sweep": plot_sweep, "temp": plot_temp, "topp": plot_topp}


def plot_job(kind: str, json_path, out) -> Path:
    """One PNG from the JSON beside it: kind is sweep, temp or topp (drawn from topp_detail.json)."""
    from mminfer.io import read_json

    path = PLOTS[kind](read_json(json_path), out)
    logging.getLogger("mminfer").info("drew %s from %s", out, json_path)
    return path
