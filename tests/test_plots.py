"""The pictures (each section's plot.py): valid PNGs, Korean with every glyph, honest titles."""

from __future__ import annotations

import dataclasses
import json
import warnings

import matplotlib.image
import pytest
import reportdata
from conftest import CHAT_PROMPT
from reportdata import course_serve_record
from reportdata import serve_record as demo_serve_record
from shapes import prompt_of, serve_settings

from mminfer.measures.serve.measure import serve
from mminfer.measures.serve.serve import Serve
from mminfer.measures.sweep.measure import SweepSettings, sweep
from mminfer.measures.sweep.sweep import Sweep
from mminfer.measures.temp.measure import summarize_answers
from mminfer.measures.temp.temp import Temperatures
from mminfer.measures.topp.measure import topp_detail
from mminfer.measures.topp.topp import TopPDetail
from mminfer.records import from_json, to_json
from mminfer.report import drawing
from mminfer.report.sections.anatomy.plot import plot_profile
from mminfer.report.sections.conversation.plot import plot_conversation
from mminfer.report.sections.latency.plot import plot_latency
from mminfer.report.sections.serve.plot import plot_serve, serve_titles
from mminfer.report.sections.sweep.plot import plot_sweep, sweep_ratio_title
from mminfer.report.sections.temp.plot import plot_temp
from mminfer.report.sections.topp.plot import plot_topp

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
KOREAN_ANSWERS = (
    ["가람 마을의 특산물은 사과입니다."] * 20 + ["배입니다."] * 6 + ["$5 apple\npie"] * 3 + [""]
)


def as_written(record, kind):
    """The record as a rule reads it back from its JSON file."""
    return from_json(kind, json.loads(json.dumps(to_json(record), ensure_ascii=False)))


def assert_valid_png(path, min_pixels: int = 200) -> None:
    with open(path, "rb") as handle:
        assert handle.read(8) == PNG_SIGNATURE
    image = matplotlib.image.imread(path)
    height, width = image.shape[:2]
    assert height >= min_pixels and width >= min_pixels
    assert image[..., :3].std() > 0  # not a single uniform colour


@pytest.fixture(scope="module")
def sweep_record(tiny_model, tiny_run) -> Sweep:
    prompt = prompt_of(9)
    settings = SweepSettings(lengths=[2, 4, 8], warmup=0, runs=1, all_steps_up_to=3, spread_steps=2)
    swept = sweep(
        model=tiny_model,
        prompt_ids=prompt,
        settings=settings,
        device="cpu",
        run=tiny_run,
        max_positions=64,
    )
    return as_written(swept, Sweep)


@pytest.fixture(scope="module")
def temp_record(tiny_run) -> Temperatures:
    result = {
        "0.3": summarize_answers(KOREAN_ANSWERS, 0, CHAT_PROMPT, tiny_run),
        "1.0": summarize_answers([f"답 {i % 17}" for i in range(30)], 0, CHAT_PROMPT, tiny_run),
        "1.5": summarize_answers([f"답 {i}" for i in range(30)], 0, CHAT_PROMPT, tiny_run),
    }
    return as_written(result, Temperatures)


@pytest.fixture(scope="module")
def topp_record(tiny_model, tiny_tokenizer, tiny_run) -> TopPDetail:
    prefixes = {"open": "민수는", "sharp": "가람 마을의 특산물은"}
    ps = [0.5, 0.9, 0.99]
    run = {"device": "cpu", "run": tiny_run}
    detail = topp_detail(
        model=tiny_model, tokenizer=tiny_tokenizer, prefixes=prefixes, ps=ps, **run
    )
    return as_written(detail, TopPDetail)


@pytest.fixture(scope="module")
def serve_record(tiny_model, tiny_run) -> Serve:
    prompt = prompt_of(9)
    settings = serve_settings(batches=[1, 2, 4], warmup=0, prefill_up_to=2, memory_cap_gib=1.0)
    run = {"device": "cpu", "run": tiny_run}
    served = serve(
        model=tiny_model, config=tiny_model.config, prompt_ids=prompt, settings=settings, **run
    )
    return as_written(served, Serve)


@pytest.mark.parametrize("name", ["serve", "sweep", "temp", "topp"])
def test_each_plot_writes_a_valid_png_and_nothing_else(name, request, tmp_path):
    record = request.getfixturevalue(f"{name}_record")
    draw = {"serve": plot_serve, "sweep": plot_sweep, "temp": plot_temp, "topp": plot_topp}[name]
    out = draw(record, tmp_path / f"{name}.png")
    assert_valid_png(out)
    assert [path.name for path in tmp_path.iterdir()] == [f"{name}.png"]


def test_korean_text_raises_no_missing_glyph_warning(temp_record, topp_record, tmp_path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        plot_temp(temp_record, tmp_path / "temp.png")
        plot_topp(topp_record, tmp_path / "topp.png")
    assert [str(w.message) for w in caught if "missing from font" in str(w.message)] == []


def test_log_axis_exponents_keep_their_minus_sign(topp_record, tmp_path, caplog):
    # probabilities over five decades: the y ticks read 10^-1 ... 10^-5, written in mathtext
    positions = {
        name: dataclasses.replace(position, sorted_probs=[10.0**-k for k in range(6)])
        for name, position in topp_record.positions.items()
    }
    decades = dataclasses.replace(topp_record, positions=positions)
    with caplog.at_level("WARNING"):
        plot_topp(decades, tmp_path / "topp.png")
    assert not [r for r in caplog.records if "does not have a glyph" in r.getMessage()]


def test_answer_labels_are_the_answers_themselves():
    assert drawing.answer_label("가람 마을") == "가람 마을"
    assert drawing.answer_label("apple\n pie") == "apple pie"
    assert drawing.answer_label("") == "(빈 답)"
    assert drawing.answer_label("$5 and $6") == r"\$5 and \$6"  # not mathtext


def test_hangul_is_drawn_with_the_packaged_font():
    from matplotlib import font_manager

    path = font_manager.findfont(
        font_manager.FontProperties(family=drawing.matplotlib.rcParams["font.family"])
    )
    assert path.endswith("NanumGothic.ttf")


@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o027, 0o640)])
def test_plot_png_gets_the_mode_of_a_plain_open(temp_record, tmp_path, umask, mask, mode):
    umask(mask)
    plot_temp(temp_record, tmp_path / "temp.png")
    assert (tmp_path / "temp.png").stat().st_mode & 0o777 == mode


# --- what the serve and sweep pictures say (issue 25) --------------------------------------------


def drawn(monkeypatch, draw, record):
    """The figure ``draw`` builds for ``record``, kept open instead of saved."""
    figures = []
    monkeypatch.setattr(drawing, "save_figure", lambda fig, out: figures.append(fig))
    draw(record, "unused.png")
    return figures[0]


def test_the_serve_titles_say_what_the_table_shows():
    speed, step = serve_titles(course_serve_record())
    assert speed.startswith("초당 토큰(중앙값)은 B = 32에서 가장 많다 (B = 1의 5.3배)")
    assert "B = 32부터 두 배마다 +10% 미만" in speed
    assert step.startswith("거의 공짜인 배치 없음") and "판정 ok (패스 7번" in step
    speed, step = serve_titles(demo_serve_record())
    assert "B = 64까지 두 배마다 +10% 넘게" in speed
    assert step.startswith("B = 8까지 거의 공짜")


def test_the_serve_title_states_growth_only_where_every_step_up_supports_it():
    """serve's dip at B 1 -> 2 (issue 36): the title says neither that every doubling grew nor,
    5 passes short of Holm's level for 6 steps, where growth fell short (as the section)."""
    from reportcases import serve_dipping

    speed, _ = serve_titles(serve_dipping(2))
    assert "두 배마다 +10% 넘게" not in speed and "늘지 않은 곳" not in speed


def test_the_sweep_ratio_title_marks_an_estimate():
    from reportcases import sweep_after_time_prompt

    title = sweep_ratio_title(sweep_after_time_prompt(64, [39, 63], 12.43, noisy=63))
    assert title.endswith("N = 64: 시간 비율이 토큰 비율에 못 미친다 (≈ 어림)")


def test_the_serve_picture_draws_ranges_the_peak_the_cliff_and_plain_numbers(monkeypatch):
    fig = drawn(monkeypatch, plot_serve, course_serve_record())
    speed_ax, step_ax = fig.axes
    assert "정점: B = 32" in speed_ax.get_legend_handles_labels()[1]
    assert any("절벽: 배치 ×2에 한 단계 ×3.4" in text.get_text() for text in step_ax.texts)
    assert len(step_ax.containers) == 1  # the error bars of the passes' range
    assert speed_ax.get_title() == serve_titles(course_serve_record())[0]
    fig.canvas.draw()  # the log axes label plain numbers
    assert step_ax.get_yscale() == "log"  # 2.33 ms to 48 ms
    labels = []
    for ax in (speed_ax, step_ax):
        for minor in (False, True):
            labels += [text.get_text() for text in ax.get_yticklabels(minor=minor)]
    shown = [label for label in labels if label]
    assert "40" in shown and "10" in shown  # milliseconds as they read
    assert not [label for label in shown if "times" in label or "^" in label or "e+" in label]
    drawing.plt.close(fig)


def serve_fitted_up_to(high: int, holds: bool) -> Serve:
    """The course model's serve.json with its fit held over B 1 to ``high`` only."""
    data = to_json(course_serve_record())
    data["fit"]["fitted_batches"] = [1, high]
    data["fit"]["holds"] = holds
    return from_json(Serve, data)


def fit_lines(step_ax) -> dict:
    """{label: (line style, batches)} of the step panel's fit lines."""
    lines = {}
    for line in step_ax.get_lines():
        if "적합" in line.get_label():
            lines[line.get_label()] = (line.get_linestyle(), list(line.get_xdata()))
    return lines


FITTED = {  # solid where fitted, dotted beyond
    "적합: B와 무관한 몫 + 사용자당 × B (B 1–16에서 맞음)": ("-", [1, 2, 4, 8, 16]),
    "B 16 너머의 적합 직선 (거기서는 맞추지 않음)": (":", [16, 32, 64]),
}
NOT_HOLDING = {
    "적합: B와 무관한 몫 + 사용자당 × B (B 1–64에서 맞지 않음)": (":", [1, 2, 4, 8, 16, 32, 64])
}


@pytest.mark.parametrize("high, holds, lines", [(16, True, FITTED), (64, False, NOT_HOLDING)])
def test_the_serve_fit_is_solid_only_where_fitted_and_holding(monkeypatch, high, holds, lines):
    fig = drawn(monkeypatch, plot_serve, serve_fitted_up_to(high, holds))
    assert fit_lines(fig.axes[1]) == lines
    drawing.plt.close(fig)


def test_the_ratio_panel_keeps_every_length_when_the_fit_fails(monkeypatch):
    data = to_json(reportdata.sweep_record(holds=False))
    steps = data["steps"]
    steps["without_cache_s"] = steps["without_cache_s"][:8] + [None] * 7 + [0.0055]
    steps["without_cache_how"] = ["clocked"] * 8 + ["interpolation"] * 7 + ["clocked"]
    data["points"][1]["without_cache_from"] = "interpolation"
    fig = drawn(monkeypatch, plot_sweep, from_json(Sweep, data))
    step_ax, _, ratio_ax = fig.axes
    labels = ratio_ax.get_legend_handles_labels()[1]
    assert "≈ 시간 비율, 캐시 없는 단계 일부를 보간으로" in labels
    time_ratio = ratio_ax.get_lines()[1]
    assert list(time_ratio.get_xdata()) == [1, 16]  # both lengths kept
    assert "캐시 미사용, 잰 단계 사이 보간 (≈)" in (step_ax.get_legend_handles_labels()[1])
    drawing.plt.close(fig)


# --- no picture covers itself (issue 30) ---------------------------------------------------------


def label_boxes(fig) -> list[tuple[str, object]]:
    """Every legend's and every written text's box on the drawn figure (titles and tick labels
    are laid out by matplotlib itself and left out), in display pixels."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    boxes = []
    for ax in fig.axes:
        legend = ax.get_legend()
        if legend is not None:
            boxes.append((f"legend of {ax.get_title()[:30]!r}", legend.get_window_extent(renderer)))
        for text in ax.texts:
            if text.get_visible() and text.get_text().strip():
                boxes.append((repr(text.get_text()[:40]), text.get_window_extent(renderer)))
    return boxes


def overlapping(fig) -> list[tuple[str, str]]:
    """The pairs of legends and texts whose boxes overlap by more than a pixel each way."""
    boxes = label_boxes(fig)
    pairs = []
    for index, (name, box) in enumerate(boxes):
        for other_name, other in boxes[index + 1 :]:
            width = min(box.x1, other.x1) - max(box.x0, other.x0)
            height = min(box.y1, other.y1) - max(box.y0, other.y0)
            if width > 1 and height > 1:
                pairs.append((name, other_name))
    return pairs


def test_overlapping_finds_a_legend_over_a_text(monkeypatch):
    figure, ax = drawing.plt.subplots()
    ax.plot([0, 1], [0, 1], label="a line with a long label")
    ax.annotate("a note", (0.5, 0.5), xycoords="axes fraction")
    ax.legend(loc="center")
    assert overlapping(figure)
    drawing.plt.close(figure)


PICTURE_CASES = {
    "serve (demo)": (plot_serve, lambda: demo_serve_record()),
    "serve (course)": (plot_serve, lambda: course_serve_record()),
    "sweep": (plot_sweep, lambda: reportdata.sweep_record()),
    "temp": (plot_temp, lambda: reportdata.temp_record()),
    "topp": (plot_topp, lambda: reportdata.topp_detail_record()),
    "conversation": (plot_conversation, lambda: reportdata.conversation_record()),
    "latency": (plot_latency, lambda: reportdata.latency_record()),
    "anatomy_profile": (plot_profile, lambda: reportdata.anatomy_record()),
}


@pytest.mark.parametrize("case", sorted(PICTURE_CASES))
def test_no_legend_or_text_of_a_picture_covers_another(monkeypatch, case):
    draw, record = PICTURE_CASES[case]
    figure = drawn(monkeypatch, draw, record())
    try:
        assert overlapping(figure) == []
    finally:
        drawing.plt.close(figure)


def hangul(text: str) -> bool:
    return any("\uac00" <= char <= "\ud7a3" for char in text)


@pytest.mark.parametrize("case", ["temp", "topp", "conversation", "latency", "anatomy_profile"])
def test_the_sampling_pictures_speak_korean(monkeypatch, case):
    draw, record = PICTURE_CASES[case]
    figure = drawn(monkeypatch, draw, record())
    try:
        for ax in figure.axes:
            texts = [ax.get_title(), ax.get_xlabel(), ax.get_ylabel()]
            texts += ax.get_legend_handles_labels()[1]
            assert all(hangul(text) for text in texts if text.strip()), texts
    finally:
        drawing.plt.close(figure)


def test_the_conversation_picture_calls_a_ttft_that_falls_as_the_prompt_grows_an_estimate(
    monkeypatch,
):
    from reportcases import ttft_falling  # 7 rounds a turn: the intervals decide

    falling = ttft_falling()
    for record, estimate in ((reportdata.conversation_record(), False), (falling, True)):
        figure = drawn(monkeypatch, plot_conversation, record)
        try:
            assert figure.axes[1].get_title().endswith(": 어림") == estimate
        finally:
            drawing.plt.close(figure)
