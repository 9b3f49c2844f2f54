"""The conversation's turns' picture, drawn beside its section (over mminfer.report.drawing)."""

from __future__ import annotations

from pathlib import Path

from mminfer.measures.conversation import decide as conversation_decide
from mminfer.measures.conversation.conversation import Conversation
from mminfer.report import drawing
from mminfer.report.drawing import (
    error_bars,
    finish_axis,
    plt,
    ticker,
)


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
    return drawing.save_figure(fig, out_png)
