"""anatomy.json: where a step's time goes, at the task's own P and N. Its record, split, facts.

The record holds exact counts (mminfer.measures.anatomy.measure: per call of forward, the tokens
fed, the context, the logits rows, the FLOPs as torch's counter and the formula give them, the
bytes a call reads and writes by the formula, the ops dispatched) and this machine's speeds, each
probe with its runs, the interval of their rates and whether they fall into two groups (the cost
of one dispatched op, the matmul FLOP/s, the bandwidth at each path's working set and past the
last-level cache), and how busy the machine was while they ran. The time split is not in the
file: the report joins the record with time.json (:meth:`Anatomy.split`, called by its report
section, mminfer/report/sections/anatomy/), so that re-timing (``snakemake -R time``) never reruns
the anatomy.

Every figure of the split is an interval: a term's seconds from its probe's, the model's sum and
its ratio to the measured time bound by bound, each missing at most as often as the intervals it
reads together (mminfer.records.interval.joined). Which term binds, whether the model adds up and
a term's share of the measured time are said only where those intervals decide them at
FAMILY_LEVEL, and never from a probe whose runs fall into two groups (decide.py; beside time.json,
its section's joins.py); the suite's oracles decide each again from the raw runs. Torch-free: the
report rule imports it.
"""

from __future__ import annotations

from dataclasses import dataclass

from mminfer.records import RunInfo, rates
from mminfer.records.interval import Interval, joined, median_interval, over
from mminfer.records.machine import Contention, Speed

PATHS = ("with_cache", "without_cache")
# The three terms of a path's modeled time; the larger of the last two overlaps the other.
TERMS = ("dispatch", "arithmetic", "memory")


@dataclass
class Step:
    """One call of forward, counted exactly (the formulas: docs/measurements.md)."""

    fed: int  # tokens fed into this call
    context: int  # the positions its attention covered: past + fed
    logits_rows: int  # rows of vocabulary logits its lm_head computed (logits_to_keep=0: all fed)
    logits_rows_keep_one: int  # what logits_to_keep=1 would have computed
    flops_counted: int  # FlopCounterMode's count of its matmuls (2 per multiply-add)
    flops_formula: int  # the formula's, the sum of formula_parts
    flops_unseen: int  # the formula's parts computed by ops the counter has no entry for
    uncounted_ops: dict[str, int]  # those ops (a contraction without a counter entry): their calls
    formula_parts: dict[str, int]  # projections, attention, mlp (or router, experts), lora, lm_head
    bytes_formula: int  # the bytes it reads and writes by the formula, the sum of bytes_parts
    bytes_parts: dict[str, int]  # weights, kv_cat, repeat_kv, attention_kv, logits
    ops: int  # ops it dispatched (inside generate's own inference_mode)


@dataclass
class Totals:
    """A path's calls summed: the same names as a :class:`Step`'s."""

    calls: int
    fed: int
    context: int  # summed over the calls
    logits_rows: int
    logits_rows_keep_one: int
    flops_counted: int
    flops_formula: int
    flops_unseen: int
    formula_parts: dict[str, int]
    bytes_formula: int
    bytes_parts: dict[str, int]
    ops_in_forward: int
    ops_between: int  # generate's own work between the calls (argmax, the cat of the ids)
    ops: int  # in_forward + between: every op of the generate call


@dataclass
class PathCounts:
    """One way of generating (with or without the cache): each call, the totals, the ids."""

    steps: list[Step]
    totals: Totals
    working_set_bytes: int  # the bytes one call reads and writes, on average (the probe's size)
    new_ids: list[int]


@dataclass
class Bandwidth:
    """The copy bandwidth at one working set (read plus write)."""

    at: str  # "with_cache", "without_cache" (a path's working set) or "past_last_level"
    working_set_bytes: int
    speed: Speed


@dataclass
class Machine:
    """This machine's speeds, measured beside the counts with the same threads."""

    op: Speed  # tiny elementwise ops back to back: per_s is ops a second
    op_probe: str  # what was timed
    matmul: Speed  # large square matmuls: FLOPs a second (the arithmetic ceiling)
    matmul_size: int  # n of the n x n x n matmul
    bandwidth: list[Bandwidth]
    last_level_bytes: int | None  # the largest cache the threads hold together (None: unknown)
    noisy_cv: float  # a probe whose runs spread more than this is named as noisy

    def past_in_cache(self) -> bool:
        """Whether the probe past the last-level cache fits in it (the memory cap of
        mminfer.measures.anatomy.measure made it so): its rate is the cache's, not memory's."""
        past = [probe for probe in self.bandwidth if probe.at == "past_last_level"]
        if not past or self.last_level_bytes is None:
            return False
        return past[0].working_set_bytes <= self.last_level_bytes


# The categories of a profiled generate (mminfer.measures.anatomy.profile): the leaf ops' self
# time within each scope, and the rest: wall time minus the top-level ops' (Python and the
# framework between ops).
CATEGORIES = (
    "matmul",  # the projections and the MLP's (and LoRA's) linear layers
    "attention",  # the attention's own ops: scores, softmax, weighted values (or SDPA)
    "kv_cat",  # the cache's torch.cat, in the attention's own scope
    "repeat_kv",  # repeat_kv's copies
    "elementwise",  # normalisation, RoPE, activations, residual adds, the embedding
    "lm_head",
    "sampling",  # generate's own work between the calls of forward (argmax, the cat of the ids)
)
REST = "rest"
# Korean names of the profile's CATEGORIES and the rest
CATEGORY_WORDS = {
    "matmul": "투영과 MLP의 행렬곱",
    "attention": "어텐션",
    "kv_cat": "캐시의 torch.cat",
    "repeat_kv": "repeat_kv의 복사",
    "elementwise": "정규화, RoPE, 활성화",
    "lm_head": "lm_head(어휘 투영)",
    "sampling": "샘플링(generate 자신의 일)",
    REST: "나머지(op 사이의 Python과 프레임워크)",
}


@dataclass
class Profile:
    """One path's generate (step 1's, greedy) under torch.profiler, in a few rounds."""

    rounds: list[dict[str, float]]  # each profiled round: CATEGORIES and REST -> s, and "wall"
    unprofiled_s: list[float]  # the same generate unprofiled, each before a profiled round
    parts_s: dict[str, float]  # the rounds' medians, REST included
    parts_interval: dict[str, Interval]
    wall_s: float  # the profiled rounds' median wall time
    wall_interval: Interval
    profiler_cost: Interval  # profiled ÷ unprofiled wall, paired by round

    def rest_share(self) -> Interval:
        """The rest's share of the wall, its interval from the rounds' shares."""
        return median_interval([r[REST] / r["wall"] for r in self.rounds if r["wall"] > 0])

    def largest(self, count: int = 3) -> list[str]:
        """The ``count`` largest categories by median, the rest aside."""
        named = [(s, c) for c, s in self.parts_s.items() if c != REST]
        return [c for _, c in sorted(named, reverse=True)[:count]]

    def largest_named(self, count: int = 3) -> list[tuple[str, Interval]]:
        """The largest categories' Korean names and intervals (:meth:`largest`)."""
        return [(CATEGORY_WORDS[c], self.parts_interval[c]) for c in self.largest(count)]


@dataclass
class Anatomy:
    """anatomy.json: one greedy generate taken apart, both ways, and the machine beside it."""

    prompt_len: int
    new_tokens: int
    with_cache: PathCounts
    without_cache: PathCounts
    same_ids: bool  # both ways generated the same ids (they must: greedy)
    uncounted_ops: dict[str, str]  # op the counter misses -> the formula's part it computes
    flop_counter: str
    bytes_per_element: int
    machine: Machine
    split_tolerance: float  # anatomy.split_tolerance: the model "adds up" where modeled / measured
    # lies wholly within 1 ± this share
    threads: int
    cpu_count: int | None
    load_before: list[float] | None
    load_after: list[float] | None
    run: RunInfo
    contention: Contention | None  # during the probes' runs (mminfer.records.machine)
    # each path's generate under torch.profiler ("with_cache", "without_cache"): Profile
    profile: dict[str, Profile] | None = None

    def path(self, name: str) -> PathCounts:
        return {"with_cache": self.with_cache, "without_cache": self.without_cache}[name]

    def probes(self) -> dict[str, Speed]:
        """Every probe by name: "op", "matmul", "bandwidth_<at>"."""
        machine = self.machine
        probes = {"op": machine.op, "matmul": machine.matmul}
        return probes | {f"bandwidth_{probe.at}": probe.speed for probe in machine.bandwidth}

    def weights_floor(self) -> Interval:
        """One cached step's floor on this machine: the weight bytes a cached call reads (the
        formula's), once, over the bandwidth the probe measured at the cached path's working set
        (the cache level they fit in); seconds, the interval from the probe's."""
        weights = self.with_cache.steps[-1].bytes_parts["weights"]
        rate = self.probes()["bandwidth_with_cache"].per_s_interval
        return joined(weights / rate.median, weights / rate.high, weights / rate.low, [rate])

    def unreliable_probes(self) -> list[str]:
        """The probes whose runs fall into two groups (Speed.reliable false): nothing is
        concluded from them."""
        return [name for name, speed in self.probes().items() if not speed.reliable]

    def noisy_probes(self) -> list[str]:
        """The reliable probes whose runs spread more than the machine's noisy_cv."""
        return [
            name
            for name, speed in self.probes().items()
            if speed.reliable and speed.cv > self.machine.noisy_cv
        ]

    def term_probes(self, name: str) -> dict[str, str]:
        """The probe each of path ``name``'s TERMS is timed by."""
        return {"dispatch": "op", "arithmetic": "matmul", "memory": f"bandwidth_{name}"}

    def term_work(self, name: str) -> dict[str, int]:
        """What each of path ``name``'s TERMS counts: its kernels, its FLOPs, its bytes."""
        totals = self.path(name).totals
        return {
            "dispatch": totals.ops,
            "arithmetic": totals.flops_formula,
            "memory": totals.bytes_formula,
        }

    def modeled_terms(self, name: str) -> dict[str, float]:
        """Path ``name``'s three terms in seconds: its kernels at the op probe's cost, its FLOPs
        (the formula's) at the matmul probe's rate, its bytes at its working set's bandwidth."""
        probes = self.probes()
        work = self.term_work(name)
        return {
            term: rates.seconds_for(work[term], probes[probe].per_s)
            for term, probe in self.term_probes(name).items()
        }

    def split(self, name: str, measured: Interval) -> PathSplit:
        """Path ``name``'s time split against ``measured`` (time.json's median and interval)."""
        totals = self.path(name).totals
        probes = self.probes()
        work = self.term_work(name)
        terms = {
            term: seconds_interval(work[term], probes[probe].per_s_interval)
            for term, probe in self.term_probes(name).items()
        }
        unreliable = self.unreliable_probes()
        return PathSplit(
            path=name,
            seconds=self.modeled_terms(name),
            terms=terms,
            unreliable=tuple(
                term for term, probe in self.term_probes(name).items() if probe in unreliable
            ),
            measured=measured,
            achieved_flops_per_s=rates.flops_per_s(totals.flops_formula, measured.median),
            achieved_bytes_per_s=rates.bytes_per_s(totals.bytes_formula, measured.median),
            tolerance=self.split_tolerance,
        )


def seconds_interval(work: int, rate: Interval) -> Interval:
    """``work`` at a probe's rate, in seconds: the rate's interval turned over (its high rate
    the fewest seconds); its coverage the rate's."""
    return Interval(
        median=rates.seconds_for(work, rate.median),
        low=rates.seconds_for(work, rate.high),
        high=rates.seconds_for(work, rate.low),
        coverage=rate.coverage,
        level=rate.level,
        runs=rate.runs,
    )


@dataclass(frozen=True)
class PathSplit:
    """A path's modeled time (dispatch + the larger of arithmetic and memory) against its
    measured median, each an interval; what it achieved; what the intervals decide."""

    path: str
    seconds: dict[str, float]  # each of TERMS, at the probes' medians
    terms: dict[str, Interval]  # each of TERMS, from its probe's interval
    unreliable: tuple[str, ...]  # the TERMS whose probe's runs fall into two groups
    measured: Interval  # time.json's median and interval of the path
    achieved_flops_per_s: float
    achieved_bytes_per_s: float
    tolerance: float

    @property
    def measured_s(self) -> float:
        return self.measured.median

    @property
    def modeled(self) -> Interval:
        """dispatch + max(arithmetic, memory), bound by bound."""
        dispatch, arithmetic, memory = (self.terms[term] for term in TERMS)
        return joined(
            dispatch.median + max(arithmetic.median, memory.median),
            dispatch.low + max(arithmetic.low, memory.low),
            dispatch.high + max(arithmetic.high, memory.high),
            list(self.terms.values()),
        )

    @property
    def modeled_s(self) -> float:
        return self.modeled.median

    @property
    def miss(self) -> float:
        """(modeled - measured) / measured, at the medians."""
        return (self.modeled_s - self.measured_s) / self.measured_s

    @property
    def ratio(self) -> Interval:
        """modeled / measured: 1 where the model adds up exactly."""
        return over(self.modeled, self.measured, [*self.terms.values(), self.measured])

    def share_interval(self, term: str) -> Interval:
        """A term's seconds over the measured time; for arithmetic and memory also the achieved
        rate over the probe's (the same ratio: work / measured over work / term)."""
        return over(self.terms[term], self.measured, [self.terms[term], self.measured])

    def share(self, term: str) -> float:
        return self.share_interval(term).median

    @property
    def achieved_gflop_per_s(self) -> float:
        """achieved_flops_per_s in GFLOP/s, as the section prints it."""
        return rates.gflop_per_s(self.achieved_flops_per_s)

    @property
    def achieved_gb_per_s(self) -> float:
        """achieved_bytes_per_s in GB/s, as the section prints it."""
        return rates.gb_per_s(self.achieved_bytes_per_s)


def path_splits(anatomy: Anatomy, measured: dict[str, Interval]) -> dict[str, PathSplit]:
    """Each path split against its measured interval (``measured``, by path)."""
    return {name: anatomy.split(name, measured[name]) for name in PATHS}


PROBES = "anatomy.machine"
