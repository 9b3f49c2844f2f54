"""anatomy.json: where a step's time goes, at the task's own P and N. Its record, split, facts.

The record holds exact counts (mminfer.measures.anatomy.measure: per call of forward, the tokens
fed, the context, the logits rows, the FLOPs as torch's counter and the formula give them, the
bytes a call reads and writes by the formula, the ops dispatched) and this machine's speeds with
their spreads (the cost of one dispatched op, the matmul FLOP/s, the bandwidth at each path's
working set and past the last-level cache). The time split is not in the file: the report joins
the record with time.json (:meth:`Anatomy.split`, called by mminfer.report.joins), so that
re-timing (``snakemake -R time``) never reruns the anatomy. Torch-free: the report rule imports it.
"""

from __future__ import annotations

from dataclasses import dataclass

from mminfer.records import RunInfo, rates
from mminfer.records.claims import claim
from mminfer.records.machine import Speed

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
    split_tolerance: float  # anatomy.split_tolerance: the modeled time "adds up" within this share
    threads: int
    cpu_count: int | None
    load_before: list[float] | None
    load_after: list[float] | None
    run: RunInfo

    def path(self, name: str) -> PathCounts:
        return {"with_cache": self.with_cache, "without_cache": self.without_cache}[name]

    def bandwidth_at(self, name: str) -> Speed:
        """The bandwidth probed at path ``name``'s working set."""
        for probe in self.machine.bandwidth:
            if probe.at == name:
                return probe.speed
        raise KeyError(f"anatomy.json has no bandwidth probe at {name!r}")

    def modeled_terms(self, name: str) -> dict[str, float]:
        """Path ``name``'s three terms in seconds: its kernels at the op probe's cost, its FLOPs
        (the formula's) at the matmul probe's rate, its bytes at its working set's bandwidth."""
        totals = self.path(name).totals
        return {
            "dispatch": rates.seconds_for(totals.ops, self.machine.op.per_s),
            "arithmetic": rates.seconds_for(totals.flops_formula, self.machine.matmul.per_s),
            "memory": rates.seconds_for(totals.bytes_formula, self.bandwidth_at(name).per_s),
        }

    def split(self, name: str, measured_s: float) -> PathSplit:
        """Path ``name``'s time split against ``measured_s`` (time.json's median)."""
        totals = self.path(name).totals
        seconds = self.modeled_terms(name)
        modeled = seconds["dispatch"] + max(seconds["arithmetic"], seconds["memory"])
        return PathSplit(
            path=name,
            seconds=seconds,
            modeled_s=modeled,
            measured_s=measured_s,
            miss=(modeled - measured_s) / measured_s,
            achieved_flops_per_s=rates.flops_per_s(totals.flops_formula, measured_s),
            achieved_bytes_per_s=rates.bytes_per_s(totals.bytes_formula, measured_s),
            machine_flops_per_s=self.machine.matmul.per_s,
            machine_bytes_per_s=self.bandwidth_at(name).per_s,
            tolerance=self.split_tolerance,
        )


@dataclass(frozen=True)
class PathSplit:
    """A path's modeled time (dispatch + the larger of arithmetic and memory) against its
    measured median, and what it achieved."""

    path: str
    seconds: dict[str, float]  # each of TERMS
    modeled_s: float
    measured_s: float
    miss: float  # (modeled - measured) / measured
    achieved_flops_per_s: float
    achieved_bytes_per_s: float
    machine_flops_per_s: float  # the matmul probe's: what the achieved FLOP/s is set against
    machine_bytes_per_s: float  # the bandwidth probe's at the path's working set
    tolerance: float

    @property
    def adds_up(self) -> bool:
        """The modeled time within the tolerance of the measured one, either way."""
        return abs(self.miss) <= self.tolerance

    def share(self, term: str) -> float:
        """A term's seconds over the measured median."""
        return self.seconds[term] / self.measured_s

    @property
    def achieved_gflop_per_s(self) -> float:
        """achieved_flops_per_s in GFLOP/s, as the section prints it."""
        return rates.gflop_per_s(self.achieved_flops_per_s)

    @property
    def achieved_gb_per_s(self) -> float:
        """achieved_bytes_per_s in GB/s, as the section prints it."""
        return rates.gb_per_s(self.achieved_bytes_per_s)

    @property
    def flops_share_of_machine(self) -> float:
        """The achieved FLOP/s over the matmul probe's: how near the arithmetic ceiling."""
        return self.achieved_flops_per_s / self.machine_flops_per_s

    @property
    def bytes_share_of_machine(self) -> float:
        """The achieved bytes a second over the bandwidth probe's: how near the memory ceiling."""
        return self.achieved_bytes_per_s / self.machine_bytes_per_s


def split_claims(split: PathSplit) -> dict:
    """A path's sentences: which term binds (one claim per term, side by side: the term with no
    fewer seconds than either other), and whether the modeled time adds up to the measured one
    within the tolerance, or misses it (over, under)."""
    about = {
        "path": split.path,
        "modeled_s": split.modeled_s,
        "measured_s": split.measured_s,
        "miss": split.miss,
        "tolerance": split.tolerance,
    }

    def binds(term: str) -> bool:
        return all(split.seconds[term] >= split.seconds[other] for other in TERMS)

    def figures(term: str) -> dict:
        return {"path": split.path, "seconds": split.seconds[term], "share": split.share(term)}

    return {
        "binds": {
            "dispatch": claim("anatomy.dispatch_binds", binds("dispatch"), **figures("dispatch")),
            "arithmetic": claim(
                "anatomy.arithmetic_binds", binds("arithmetic"), **figures("arithmetic")
            ),
            "memory": claim("anatomy.memory_binds", binds("memory"), **figures("memory")),
        },
        "adds_up": claim("anatomy.adds_up", split.adds_up, **about),
        "over": claim("anatomy.misses_over", split.miss > split.tolerance, **about),
        "under": claim("anatomy.misses_under", split.miss < -split.tolerance, **about),
    }


def noisy_probes(anatomy: Anatomy) -> list[str]:
    """The probes whose runs spread more than the machine's noisy_cv."""
    machine = anatomy.machine
    probes = {"op": machine.op, "matmul": machine.matmul}
    probes |= {f"bandwidth_{probe.at}": probe.speed for probe in machine.bandwidth}
    return [name for name, speed in probes.items() if speed.cv > machine.noisy_cv]


def anatomy_facts(anatomy: Anatomy) -> dict:
    """The counts and the machine; time.json's split of both paths is the report's join
    (mminfer.report.joins), absent here: ``comparable`` "absent", no ``split``."""
    cached, uncached = anatomy.with_cache.totals, anatomy.without_cache.totals
    spread = noisy_probes(anatomy)
    machine = anatomy.machine
    return vars(anatomy) | {
        # "op 하나 {op_s}, 행렬곱 {matmul_gflop_per_s} GFLOP/s, 복사 대역폭 ... {gb_per_s} GB/s"
        "op_s": rates.seconds_for(1, machine.op.per_s),
        "matmul_gflop_per_s": rates.gflop_per_s(machine.matmul.per_s),
        "bandwidth_gb_per_s": [rates.gb_per_s(probe.speed.per_s) for probe in machine.bandwidth],
        # "캐시는 FLOPs를 R배 줄이지만 forward 호출은 N회 그대로다"
        "fewer_flops_same_calls": claim(
            "anatomy.fewer_flops_same_calls",
            cached.calls == uncached.calls and uncached.flops_formula > cached.flops_formula,
            flops=uncached.flops_formula / cached.flops_formula,
            calls=cached.calls,
        ),
        "comparable": "absent",
        # "**기계 측정이 흔들렸다**: {probes}의 변동계수가 {noisy_cv}를 넘는다"
        "probes_spread": claim(
            "anatomy.probes_spread",
            bool(spread),
            probes=spread,
            threshold=anatomy.machine.noisy_cv,
        ),
        "counter_gap": bool(anatomy.uncounted_ops),
        "formula_equals_counter": claim(
            "anatomy.formula_equals_counter",
            all(
                step.flops_counted == step.flops_formula - step.flops_unseen
                for name in PATHS
                for step in anatomy.path(name).steps
            ),
        ),
        "time_verdict": None,
        "split": None,
    }


def path_splits(anatomy: Anatomy, measured: dict[str, float]) -> dict:
    """Each path split against its measured median (``measured``, by path) with its claims."""
    splits = {name: anatomy.split(name, measured[name]) for name in PATHS}
    return {name: {"split": split, "claims": split_claims(split)} for name, split in splits.items()}
