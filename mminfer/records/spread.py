"""How far to trust clocked runs: their spreads, and the verdict from the doubts they raise.

A coefficient of variation over whole runs, a robust one over the steps within a run (around the
trend of a step that grows with its context), and the rule that turns doubts into "ok", "noisy"
or "untrusted". Every timing judges its runs by these.
"""

from __future__ import annotations

import statistics

NOISY_CV = 0.10  # a method whose runs spread more than this is "noisy"
# Single steps jitter more than whole runs or their medians do: on a quiet 2-core machine the
# course model's decode steps spread up to about 10% within a pass, beside a busy loop 20-100%.
STEP_NOISY_CV = 0.20  # steps within a run or pass spreading more than this (cv_within_runs)


def coefficient_of_variation(values: list[float]) -> float:
    """Sample standard deviation over the mean; 0 for fewer than two values."""
    return statistics.stdev(values) / statistics.mean(values) if len(values) > 1 else 0.0


MAD_TO_SD = 1.4826  # a normal distribution's standard deviation over its median absolute deviation


def cv_around_trend(steps: list[float]) -> float:
    """A robust coefficient of variation of consecutive steps around their straight-line trend.

    A step that legitimately grows (the context one token longer each step) is not noise: each
    step is taken less the least-squares line's rise from the middle step, so only the jitter
    around the line is judged. The spread is 1.4826 x the median absolute deviation over the
    median (the standard deviation's robust twin): a quiet machine's few lone spikes (a garbage
    collection, a timer interrupt) leave it small, while a busy machine, which jolts many of the
    steps, shows. 0 for fewer than three steps (a line fits any two).
    """
    if len(steps) < 3:
        return 0.0
    positions = list(range(len(steps)))
    slope, _ = statistics.linear_regression(positions, steps)
    middle = (len(steps) - 1) / 2
    level = [seconds - slope * (position - middle) for position, seconds in zip(positions, steps)]
    center = statistics.median(level)
    if center <= 0:
        return 0.0
    deviation = statistics.median(abs(value - center) for value in level)
    return MAD_TO_SD * deviation / center


def cv_within_runs(runs: list[list[float]]) -> float:
    """The median over runs (or passes) of each one's :func:`cv_around_trend`.

    A steady busy loop can slow every run alike, so that the runs agree while the steps inside
    each jump about: this is the spread that sees it. The median, so that one hiccup in one run
    does not decide it.
    """
    return statistics.median(cv_around_trend(steps) for steps in runs)


def verdict_of(doubts: list[str], contradictions: tuple[str, ...]) -> str:
    """The verdict on a timing: "ok", "noisy" or "untrusted".

    "untrusted" for a doubt that contradicts physics (``contradictions``: the cache side not
    faster, more work done faster; on a correct implementation only a busy machine does that),
    "noisy" for any other doubt (a spread over NOISY_CV: of the runs, or of the steps within
    them), "ok" without one. Every timing judges its clocked runs by this same rule, each with its
    own contradictions.
    """
    if any(doubt in contradictions for doubt in doubts):
        return "untrusted"
    if doubts:
        return "noisy"
    return "ok"
