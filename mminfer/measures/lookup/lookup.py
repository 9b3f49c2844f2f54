"""lookup.json: prompt-lookup decoding against MiniMind's cached generate. Its record and its
formulas; what it decides is decide.py's.

The cache cuts the tokens a step feeds, not the steps; prompt lookup cuts the steps (forward
calls). Each case (the task's validation prompt on the pretrained model, the SFT model's chat
prompt) runs the loop at every number of guesses K: its ids against the cached generate's, its
counts against their formulas, its time against the cached generate's in the same rounds.

Pure Python, no torch: the report reads the record without the model code.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mminfer.records import RunInfo
from mminfer.records.interval import Interval
from mminfer.records.machine import Contention

# The prompts the loop runs on, in report order: the task's (six validation documents, text a
# small model often continues in phrases it has just read) and the SFT model's answer to the
# temperature question (a chat prompt with little to look up).
CASES = ("validation", "chat")


@dataclass
class WideCall:
    """One verify call of width K + 1 against a one-token step, both on the validation prompt's
    cache, paired by round: what a wider call costs on this machine."""

    width: int  # tokens fed by the wide call: K + 1
    wide_runs_s: list[float]
    step_runs_s: list[float]  # the one-token step's runs of the same rounds
    runs: int
    max_runs: int
    ratio_interval: Interval  # per-round wide / step: 1 where a wider call costs nothing more


@dataclass
class Guessing:
    """The loop at one number of guesses K on one case: ids, counts, bytes and time."""

    guesses: int  # K: guesses checked per call at most
    same_ids: bool  # the loop's greedy ids equal the cached generate's
    first_divergence: int | None  # the 0-based step where they part; None where they do not
    # where they part: the cached generate's top-1 minus top-2 logit at that step, and same.json's
    # rounding tolerance there (mminfer.records.rounding_tolerance(dtype) x (1 + the step's
    # largest |logit|)); a verify call computes the same positions in another grouping, so a gap
    # within it may round the other way
    top2_margin: float | None
    tolerance: float | None
    calls: int  # forward calls, the prefill included
    fed: int  # tokens fed into forward, the prompt included
    proposed: int  # guesses checked
    accepted: int  # guesses the model agreed with
    accepted_per_call: list[int]  # per verify call, in order
    cache_positions: int  # positions the cache holds after the last rollback
    cache_bytes: int  # the bytes its K and V tensors hold then
    formula_bytes: int  # 2 x layers x cache_positions x KV heads x head_dim x bytes per element
    # its timing, filled in once timed (case_record): empty and None where the ids part
    lookup_runs_s: list[float] = field(default_factory=list)  # timed runs, in round order
    minimind_runs_s: list[float] = field(default_factory=list)  # the case's cached generate in
    # the same rounds
    runs: int = 0  # rounds asked for
    max_runs: int = 0  # rounds at most: the level of the intervals
    lookup_interval: Interval | None = None
    # the speedup as time.json's: the ratio of the two medians, cached generate / loop, and its
    # interval (the medians' interval ends divided across, mminfer.records.interval.over)
    speedup: float | None = None
    speedup_interval: Interval | None = None
    faster: str | None = None  # the per-round ratios' decision (faster_of): "above" (the loop
    # faster), "below", "same", "undecided"
    wide: WideCall | None = None  # the validation case's K + 1 call against a one-token step


@dataclass
class LookupCase:
    """One prompt: the cached generate's calls and tokens fed, and the loop at every K."""

    prompt: str  # "validation" (step 1's prompt, the pretrained model) or "chat" (the SFT model)
    prompt_len: int  # P
    new_tokens: int  # N
    calls_cached: int  # the cached generate's forward calls, counted: N
    fed_cached: int  # the tokens it fed, counted: P + N - 1
    minimind_interval: Interval  # its median and interval over the rounds
    by_guesses: list[Guessing]  # in the order of lookup.guesses
    run: RunInfo

    def fewest_calls(self) -> Guessing:
        """The K whose loop took the fewest forward calls (the smaller K on a tie)."""
        return min(self.by_guesses, key=lambda g: (g.calls, g.guesses))


@dataclass
class Lookup:
    """lookup.json: prompt-lookup decoding at each K on each case, against the cached generate."""

    ngram: int  # the last n tokens looked up (config key lookup.ngram)
    guesses: list[int]  # config key lookup.guesses
    cases: dict[str, LookupCase]  # in CASES' order
    clock: str
    threads: int
    contention: Contention | None  # over the one interleaved timing of every side
    # the validation case's run (the pretrained model), its inputs every file the job read (the
    # SFT model, its LoRA and the tokenizer too); each case holds its own model's run
    run: RunInfo

    def widest(self) -> Guessing | None:
        """The validation case's largest K whose call of K + 1 tokens was timed, or None."""
        case = self.cases.get("validation")
        wide = [] if case is None else [g for g in case.by_guesses if g.wide is not None]
        return max(wide, key=lambda g: g.guesses) if wide else None


def calls_formula(guessing: Guessing, new_tokens: int) -> int:
    """The calls the loop needs: N - the guesses kept (each kept guess is a token without a call
    of its own)."""
    return new_tokens - guessing.accepted


def fed_formula(guessing: Guessing, prompt_len: int) -> int:
    """The tokens the loop feeds: P for the prefill, then the last token and its guesses per
    verify call: P + (calls - 1) + proposed."""
    return prompt_len + guessing.calls - 1 + guessing.proposed


def mean_accepted(guessing: Guessing) -> float:
    """Guesses kept per verify call, on average (0 where no call verified)."""
    if not guessing.accepted_per_call:
        return 0.0
    return sum(guessing.accepted_per_call) / len(guessing.accepted_per_call)
