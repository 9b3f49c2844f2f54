"""Beyond the task: figures of the sweep, the temperature answers and the top-p distributions.

Each ``plot_*`` function takes a result exactly as it is written to disk (the JSON's dict), draws with
matplotlib's non-interactive Agg backend, and saves a PNG atomically (a temporary file in the same
folder, then ``os.replace``). Every plotted number comes from the dict passed in.

Korean text (answers, prefixes) is drawn with NanumGothic, the font the koreanize-matplotlib package
ships, so every machine has the same Hangul glyphs; DejaVu Sans follows for what NanumGothic lacks.
"""

from __future__ import annotations

import importlib.util
import logging
import math
import unicodedata
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)
from matplotlib import font_manager, ticker  # noqa: E402

from mminfer.io import atomic_writer  # noqa: E402

LABEL_CHARS = 24  # answers longer than this are cut, with an ellipsis
WITH_CACHE_COLOR = "tab:blue"
WITHOUT_CACHE_COLOR = "tab:orange"


def use_hangul_font() -> None:
    """Register koreanize-matplotlib's NanumGothic and draw every text with it. The font files are
    found without importing the package (its import runs code that needs distutils, gone in Python 3.12)."""
    spec = importlib.util.find_spec("koreanize_matplotlib")
    font = Path(spec.submodule_search_locations[0]) / "fonts" / "NanumGothic.ttf"
    font_manager.fontManager.addfont(str(font))
    matplotlib.rcParams["font.family"] = [font_manager.FontProperties(fname=str(font)).get_name(), "DejaVu Sans"]
    matplotlib.rcParams["axes.unicode_minus"] = False  # NanumGothic has no U+2212 minus sign


use_hangul_font()


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


def answer_label(answer: str) -> str:
    """The answer as one short line; '(빈 답)' for an empty one."""
    return clean_text(answer) or "(빈 답)"


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
    ax.xaxis.set_major_formatter(ticker.FormatStrFormatter("%g"))


def spans_decades(values: list[float], factor: float = 10.0) -> bool:
    """True if all values are positive and the largest is at least ``factor`` times the smallest:
    then a log axis helps."""
    positive = [value for value in values if value is not None and value > 0]
    return len(positive) == len(values) and len(values) > 1 and max(positive) >= factor * min(positive)


# --- the sweep -----------------------------------------------------------------------------------------

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
    """Three panels. The main one: the time of every step of one long generation, both methods, with
    the fitted cost model dashed — without a cache each step recomputes everything so far and grows,
    with it each step stays near the fixed cost. Then the tokens each step feeds (log y), and the token
    ratio beside the time ratio against the generation length N (sums of the first N steps)."""
    steps, fit, prompt_len = sweep["steps"], sweep["fit"], sweep["prompt_len"]
    index = list(range(len(steps["with_cache_s"])))

    fig, (step_ax, fed_ax, ratio_ax) = plt.subplots(1, 3, figsize=(15, 4.6))

    for method, marker, color, label in (("with_cache", "o", WITH_CACHE_COLOR, "with cache"),
                                         ("without_cache", "s", WITHOUT_CACHE_COLOR, "without cache")):
        step_ms = [seconds * 1e3 for seconds in steps[f"{method}_s"]]
        step_ax.plot(index, step_ms, marker, color=color, markersize=2.5, alpha=0.6, label=label)
        step_ax.plot(index, [seconds * 1e3 for seconds in steps[f"fitted_{method}_s"]], "--", color=color, linewidth=1.2,
                     label=f"fit, {method.replace('_', ' ')}")
    step_ax.set_xlabel("step i (token i is generated)")
    step_ax.set_ylabel("time of the step (ms)")
    step_ax.set_title(f"every step of one {sweep['longest']}-token generation after {prompt_len} tokens")
    if spans_decades(steps["with_cache_s"] + steps["without_cache_s"]):
        step_ax.set_yscale("log")
    step_ax.legend(fontsize=8)
    step_ax.grid(True, alpha=0.3)

    fed_ax.plot(index, steps["fed_with_cache"], "o", color=WITH_CACHE_COLOR, markersize=2.5,
                label="with cache: P, then 1")
    fed_ax.plot(index, steps["fed_without_cache"], "s", color=WITHOUT_CACHE_COLOR, markersize=2.5,
                label="without cache: P + i")
    fed_ax.set_yscale("log")
    fed_ax.set_xlabel("step i")
    fed_ax.set_ylabel("tokens fed into forward")
    fed_ax.set_title("tokens fed at each step")
    fed_ax.legend(fontsize=8)
    fed_ax.grid(True, alpha=0.3)

    points = sweep["points"]
    lengths = [point["new_tokens"] for point in points]
    token_ratio = [point["token_ratio"] for point in points]
    time_ratio = [point["time_ratio"] for point in points]
    ratio_ax.plot(lengths, token_ratio, "o-", color="tab:green", label="token ratio (without / with)")
    ratio_ax.plot(lengths, time_ratio, "s-", color="tab:red", label="time ratio = speedup")
    measured = [row for row in sweep.get("predictions") or [] if row["measured"] and row["time_ratio"]]
    if measured and fit.get("holds"):
        ratio_ax.plot([row["new_tokens"] for row in measured], [row["time_ratio"] for row in measured], "--",
                      color="tab:red", alpha=0.6, label="time ratio from the fit")
    ratio_ax.axhline(1.0, color="gray", linewidth=0.8)
    finish_length_axis(ratio_ax, "what the cache saves", "without cache / with cache",
                       spans_decades(lengths, factor=4.0), spans_decades(token_ratio + time_ratio))

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
        labels = [answer_label(item["answer"]) for item in answers]
        counts = [item["count"] for item in answers]
        rows = list(range(len(answers)))
        answers_ax.barh(rows, counts, color="tab:purple", alpha=0.8)
        answers_ax.set_yticks(rows, labels, fontsize=8)
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
        shown = f"[bos]{prefix}" if prefix else f"the {name} position"
        entropy = position.get("entropy_bits")
        entropy_text = f", entropy {entropy:.2f} bits" if entropy is not None else ""
        ax.set_title(f"after {shown}{entropy_text}")

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
