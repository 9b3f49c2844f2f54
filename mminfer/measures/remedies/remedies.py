"""remedies.json: what removes the fixed cost of a decode step, each remedy timed against
MiniMind's cached generate. Its record and its arithmetic; what it decides is decide.py's.

Pure Python, no torch: the report reads the record without the model code.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mminfer.records import RunInfo
from mminfer.records.interval import (
    Interval,
    look_level,
    median_interval,
    over,
)
from mminfer.records.machine import Contention

# The remedies, in report order: the own loop alone (the control: a saving there is the loop's,
# not a remedy's), each remedy alone, all together, and torch.compile (where the compiler works).
REMEDIES = ("loop", "in_place_cache", "gqa_without_repeat_kv", "all", "compile")


@dataclass
class Remedy:
    """One remedy: the same greedy ids as MiniMind's cached generate, and its time against it.

    Timed in one interleaved timing with every other side (side a the remedy, side b MiniMind's
    cached generate, shared by every remedy): each round's (b - a) / steps is a second per step
    saved; its median's interval decides whether the remedy saves time."""

    name: str
    applies: bool  # False: not run here (``reason`` says why)
    reason: str | None
    same_ids: bool | None  # the remedy's greedy ids equal MiniMind's generate's (None: not run)
    first_divergence: int | None  # the first step where they part; None where they do not
    remedy_runs_s: list[float]  # timed runs, in round order
    minimind_runs_s: list[float]  # MiniMind's cached generate in the same rounds: one side, the
    # same runs in every remedy's record
    runs: int  # rounds asked for (looks from runs to max_runs: the level of the intervals)
    max_runs: int
    remedy_interval: Interval | None
    minimind_interval: Interval | None
    saved_per_step_interval: Interval | None  # seconds per step saved: per-round (b - a) / steps
    speedup_interval: Interval | None  # per-round b / a: above 1 where the remedy is faster
    saves: str | None  # the speedup's decision: "above" (saves), "below", "same", "undecided"
    speedup_after: float | None  # MiniMind's uncached median / the remedy's: the task's speedup
    # with this remedy in the cached path
    verdict: str | None  # "ok", "noisy" or "untrusted" (mminfer.records.spread)
    contention: Contention | None  # over the whole interleaved timing: every side's alike
    # Against the control (the own loop with no remedy, side "loop") in the same rounds: what the
    # remedy itself saves, the loop's own saving not counted again; empty and None for the loop
    # itself and for a remedy not timed.
    control_runs_s: list[float] = field(default_factory=list)  # the loop's runs, paired by round
    # with own_runs_s: the remedy's runs in the rounds the control ran too (an extra round runs
    # only the sides of a pair still undecided, so these may be fewer than remedy_runs_s)
    own_runs_s: list[float] = field(default_factory=list)
    own_saved_per_step_interval: Interval | None = None  # per-round (control - remedy) / steps
    own_saves: str | None = None  # control / remedy's decision: "above" (saves), "below", ...


@dataclass
class KeepTiming:
    """``logits_to_keep=1`` on the uncached path: lm_head on the last position only, against
    MiniMind's default (every position's logits, all but one thrown away). Reported apart."""

    same_ids: bool
    kept_runs_s: list[float]  # side a: generate(use_cache=False, logits_to_keep=1)
    full_runs_s: list[float]  # side b: generate(use_cache=False), the same runs as
    # Remedies.without_cache_runs_s
    runs: int
    max_runs: int
    saved_interval: Interval  # per-round b - a, seconds per generation
    speedup_interval: Interval  # per-round b / a
    saves: str  # the decision of speedup_interval
    speedup_after: float  # the kept uncached median / MiniMind's cached median: the task's ratio
    # without the uncached path's wasted lm_head rows
    contention: Contention | None


@dataclass
class CompileCost:
    """torch.compile's cost up front: the first compiled generation (compiling included) against
    the compiled side's timed runs, and the tokens the saving per step needs to pay it back."""

    first_call_s: float  # the first compiled generation, compiling included: one run
    compile_interval: Interval  # first_call_s minus the compiled runs' median, the interval from
    # theirs (the first call's one run against the warm runs' interval)
    # the generated tokens that pay the compile back: compile_interval over the compiled step's
    # saving against MiniMind's cached generate (saved_per_step_interval), ends divided across;
    # None where that saving is not decided above 0
    break_even_interval: Interval | None


@dataclass
class Remedies:
    """remedies.json: each remedy's ids and time against MiniMind's cached generate."""

    prompt_len: int
    new_tokens: int  # forwards per generation: the steps a saving per step is divided by
    token_ratio: float  # tokens fed without the cache / with it
    without_cache_s: float  # MiniMind's uncached generate, median of its runs (the task's B)
    without_cache_runs_s: list[float]
    with_cache_s: float  # MiniMind's cached generate, median of its runs (every remedy's pair)
    remedies: dict[str, Remedy]  # in REMEDIES' order
    compile_asked: bool  # config key remedies.compile
    logits_to_keep: KeepTiming | None  # None: the model's forward takes no logits_to_keep
    clock: str
    threads: int
    run: RunInfo
    compile_cost: CompileCost | None = None  # None where compile did not run or its ids parted

    @property
    def contention(self) -> Contention | None:
        """What the reports' busy line reads: the first busy one of its timings' contention, or
        the first measured (None where none was timed)."""
        timed = [remedy.contention for remedy in self.remedies.values()]
        if self.logits_to_keep is not None:
            timed.append(self.logits_to_keep.contention)
        measured = [contention for contention in timed if contention is not None]
        busy = [contention for contention in measured if contention.busy]
        return (busy + measured + [None])[0]

    def compiled_step(self) -> Interval | None:
        """The compiled side's seconds per step (each timed generation over N, its median and
        interval); None where compile was not timed."""
        remedy = self.remedies.get("compile")
        if remedy is None or not remedy.remedy_runs_s:
            return None
        level = look_level(remedy.runs, remedy.max_runs)
        return median_interval([run / self.new_tokens for run in remedy.remedy_runs_s], level)

    def compiled_over(self, floor: Interval) -> Interval:
        """The compiled step over a floor per step (anatomy.json's weights_floor): how many times
        the floor it takes, ends divided across."""
        step = self.compiled_step()
        return over(step, floor, [step, floor])


def saved_interval(minimind_runs_s: list[float], remedy_runs_s: list[float], steps: int, level):
    """The median of each round's (minimind - remedy) / steps, with its interval."""
    saved = [(b - a) / steps for a, b in zip(remedy_runs_s, minimind_runs_s)]
    return median_interval(saved, level)


CONTROL = "loop"  # the own decode loop with no remedy: each remedy's own saving is against it
