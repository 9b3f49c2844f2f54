"""What the machine is: its cores, its load, its memory caches, the memory free for caches, and
how fast it dispatches an op, multiplies matrices and moves bytes.

Read from the operating system (Linux's /proc and /sys, a cgroup's limit) or from torch on CUDA;
every figure says where it came from, and None or "unknown" where the system does not say. The
speeds are probes (:func:`op_speed`, :func:`matmul_speed`, :func:`copy_speed`): timed runs after
a warm-up, their median and spread, read by the one clock every timing reads (mminfer.timing.clock).
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path

import torch

from mminfer.records.machine import CacheLevel, Contention, Speed, speed_of
from mminfer.records.spread import coefficient_of_variation
from mminfer.timing.clock import device_clock

PROBE_RUNS = 7  # timed runs of each speed probe, after one warm-up
OP_LOOP = 2000  # ops per run of the op probe
OP_PROBE = "torch.add(a, b, out=c) on one-element tensors, under inference_mode"
MATMUL_SIZE = 1024  # the op probe's opposite: n x n x n matmuls, 2 n^3 FLOPs each, no dispatch
COPY_LEAST_BYTES = 64 << 20  # a copy probe's run moves at least this much (repeated copies)


def load_average() -> list[float] | None:
    """The machine's 1-, 5- and 15-minute load averages (None where the system has none)."""
    try:
        return [round(value, 2) for value in os.getloadavg()]
    except (AttributeError, OSError):  # no getloadavg (Windows), or the system cannot tell
        return None


PRESSURE_FILE = Path("/proc/pressure/cpu")


def cpu_pressure_total_s() -> float | None:
    """The kernel's CPU pressure, "some" line: seconds in all that some task waited for a CPU;
    None where the kernel has no pressure stall information (not Linux, or switched off)."""
    try:
        for line in PRESSURE_FILE.read_text(encoding="ascii").splitlines():
            if line.startswith("some"):
                total = line.split()[-1]
                return int(total.split("=", 1)[1]) / 1e6
    except (OSError, ValueError, IndexError):
        return None
    return None


class ContentionMeter:
    """Contention during a timed stretch: started before its first timed run, read after its
    last. The process's CPU time over (wall x threads) shows another process taking the cores;
    the kernel's CPU pressure shows any task waiting for one. On CUDA the CPU waits on the device,
    so only the pressure is read."""

    def __init__(self, device, clock: Callable[[], float], load_before: list[float] | None):
        self.load_before = load_before  # the load average before the warm-ups
        self.on_cpu = torch.device(device).type == "cpu"
        self.clock = clock
        self.cpu_start = time.process_time()
        self.wall_start = clock()
        self.pressure_start = cpu_pressure_total_s()

    def read(self) -> Contention:
        """The contention from the start until now."""
        wall_s = self.clock() - self.wall_start
        cpu_s = time.process_time() - self.cpu_start
        pressure_now = cpu_pressure_total_s()
        threads = torch.get_num_threads()
        cpu_share = None
        if self.on_cpu and wall_s > 0:
            cpu_share = round(cpu_s / (wall_s * threads), 3)
        cpu_pressure = None
        if self.pressure_start is not None and pressure_now is not None and wall_s > 0:
            cpu_pressure = round(min(1.0, (pressure_now - self.pressure_start) / wall_s), 3)
        return Contention.measured(
            cpu_share=cpu_share, cpu_pressure=cpu_pressure, wall_s=wall_s, threads=threads
        )


def cpu_count() -> int | None:
    """The machine's cores, as os.cpu_count() gives them (None where it cannot tell)."""
    return os.cpu_count()


def cgroup_free_bytes() -> int | None:
    """What this process's cgroup (v2) still allows: memory.max - memory.current; None without a
    limit (a SLURM job's --mem, a container's limit)."""
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text(encoding="ascii").strip()
        used = Path("/sys/fs/cgroup/memory.current").read_text(encoding="ascii").strip()
    except OSError:
        return None
    if limit == "max":
        return None
    return int(limit) - int(used)


def mem_available_bytes() -> int | None:
    """The machine's MemAvailable (Linux), or None where the system does not say."""
    try:
        with open("/proc/meminfo", encoding="ascii") as lines:
            for line in lines:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def available_bytes(device) -> tuple[int | None, str]:
    """(bytes free for caches on ``device`` now, where the figure comes from).

    On CUDA, torch.cuda.mem_get_info after the caching allocator has handed back what it holds
    unused. On a CPU, the machine's MemAvailable, or this process's cgroup limit where that is
    lower (a SLURM job's memory, a container's).
    """
    device = torch.device(device)
    if device.type == "cuda":
        torch.cuda.empty_cache()
        free, _ = torch.cuda.mem_get_info(device)
        return free, "torch.cuda.mem_get_info"
    machine = mem_available_bytes()
    limit = cgroup_free_bytes()
    if limit is not None and (machine is None or limit < machine):
        return limit, "the cgroup's memory.max - memory.current"
    if machine is not None:
        return machine, "/proc/meminfo MemAvailable"
    return None, "unknown on this system"


def size_bytes(text: str) -> int:
    """A sysfs cache size ("48K", "2048K", "32M") in bytes."""
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip()
    if text[-1:] in units:
        return int(text[:-1]) * units[text[-1]]
    return int(text)


def cpu_list(text: str) -> set[int]:
    """The CPUs of a sysfs list ("0", "0-3", "0,4", "0-1,8-9")."""
    cpus = set()
    for part in text.strip().split(","):
        if not part:
            continue
        first, _, last = part.partition("-")
        cpus.update(range(int(first), int(last or first) + 1))
    return cpus


def instances_usable(index: Path, cpus: set[int]) -> int:
    """How many distinct copies of the cache ``index`` (cpu0's ``cache/indexN``) the CPUs
    ``cpus`` reach: one per distinct shared_cpu_list among them (at least one)."""
    cpu_root = index.parent.parent.parent  # .../cpu, from .../cpu/cpu0/cache/indexN
    copies = set()
    for cpu in cpus:
        shared = cpu_root / f"cpu{cpu}" / "cache" / index.name / "shared_cpu_list"
        try:
            copies.add(frozenset(cpu_list(shared.read_text(encoding="ascii"))))
        except (OSError, ValueError):
            continue
    return max(1, len(copies))


def cpu_caches(
    root: Path = Path("/sys/devices/system/cpu/cpu0/cache"),
    threads: int = 1,
    cpus: set[int] | None = None,
) -> list[CacheLevel]:
    """The data and unified caches (L1d, L2, L3) that ``threads`` threads hold together, smallest
    first, from the first CPU's as Linux lists them; empty where the system does not say.

    A cache exists once per group of CPUs sharing it (shared_cpu_list): L1d and L2 once per core,
    L3 once for many cores. torch's threads each run on a core of their own, so together they hold
    min(threads, the copies the CPUs this process may use, ``cpus``, reach) copies: that many
    times the size, named "2 x L2" where more than one; a cache all of them share counts once.
    """
    if cpus is None:
        cpus = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else {0}
    levels = []
    for index in sorted(root.glob("index*")):
        try:
            level = (index / "level").read_text(encoding="ascii").strip()
            kind = (index / "type").read_text(encoding="ascii").strip()
            size = size_bytes((index / "size").read_text(encoding="ascii"))
        except (OSError, ValueError):
            continue
        if kind == "Instruction":
            continue
        name = f"L{level}d" if kind == "Data" else f"L{level}"
        copies = min(threads, instances_usable(index, cpus))
        if copies > 1:
            name = f"{copies} x {name}"
        levels.append(CacheLevel(name=name, bytes=size * copies))
    return sorted(levels, key=lambda level: level.bytes)


def device_caches(device, threads: int) -> tuple[list[CacheLevel], str]:
    """(the caches a decode step's ``threads`` threads hold together, where the figures come
    from): a GPU's L2 from torch (one, shared by the whole GPU), a CPU's from Linux's sysfs
    (:func:`cpu_caches`)."""
    device = torch.device(device)
    if device.type == "cuda":
        size = getattr(torch.cuda.get_device_properties(device), "L2_cache_size", None)
        if size:
            return [CacheLevel(name="L2", bytes=int(size))], "torch.cuda.get_device_properties"
        return [], "unknown: torch does not give this GPU's L2"
    levels = cpu_caches(threads=threads)
    if levels:
        source = (
            f"/sys/devices/system/cpu (cpu0's caches; a cache of one core counted once per "
            f"thread of torch's {threads}, one that the cores share once)"
        )
        return levels, source
    return [], "unknown on this system"


def probe(
    *, run: Callable[[], None], work: int, device, runs: int = PROBE_RUNS, clock=None
) -> Speed:
    """``run()`` once to warm up, then ``runs`` timed runs: ``work`` (ops, FLOPs, bytes) per run
    over the median run's seconds, the runs' spread, the interval of their rates and whether
    they fall into two groups (mminfer.records.machine.speed_of)."""
    clock = clock or device_clock(device)
    run()
    seconds = []
    for _ in range(runs):
        start = clock()
        run()
        seconds.append(clock() - start)
    return speed_of(seconds, work, coefficient_of_variation(seconds))


@torch.inference_mode()
def op_speed(device, ops: int = OP_LOOP, runs: int = PROBE_RUNS) -> Speed:
    """Ops a second when each op does next to nothing (OP_PROBE): the cost of dispatching one,
    Python's call and torch's dispatcher, as generate pays it for every op it runs."""
    a = torch.ones(1, device=device)
    b = torch.ones(1, device=device)
    c = torch.empty(1, device=device)

    def run() -> None:
        for _ in range(ops):
            torch.add(a, b, out=c)

    return probe(run=run, work=ops, device=device, runs=runs)


@torch.inference_mode()
def matmul_speed(*, device, dtype, size: int = MATMUL_SIZE, runs: int = PROBE_RUNS) -> Speed:
    """FLOPs a second of one size x size x size matmul in ``dtype`` (2 size^3 FLOPs): the
    arithmetic ceiling, one op's dispatch against a billion FLOPs."""
    a = torch.randn(size, size, device=device).to(dtype)
    b = torch.randn(size, size, device=device).to(dtype)
    out = torch.empty(size, size, device=device, dtype=dtype)

    def run() -> None:
        torch.mm(a, b, out=out)

    return probe(run=run, work=2 * size**3, device=device, runs=runs)


@torch.inference_mode()
def copy_speed(device, working_set_bytes: int, runs: int = PROBE_RUNS) -> Speed:
    """Bytes a second read plus written by copying one tensor into another, the two together
    ``working_set_bytes``; repeated within a run until it moves at least COPY_LEAST_BYTES, so a
    working set that sits in a cache is measured there, not in its first cold read."""
    half = max(1, working_set_bytes // 2)
    source = torch.ones(half, dtype=torch.uint8, device=device)
    target = torch.empty_like(source)
    repeats = max(1, -(-COPY_LEAST_BYTES // (2 * half)))

    def run() -> None:
        for _ in range(repeats):
            target.copy_(source)

    return probe(run=run, work=2 * half * repeats, device=device, runs=runs)


def last_level_bytes(device, threads: int) -> int | None:
    """The largest cache ``threads`` threads hold together (:func:`device_caches`), or None."""
    levels, _ = device_caches(device, threads)
    return levels[-1].bytes if levels else None


@contextlib.contextmanager
def phase(name: str, work: str):
    """Log one phase of a job: its wall and CPU seconds and its ``work`` in units to count
    (generations of each path), the line that shows where a job's time goes (its seconds are
    only as good as the machine was quiet; the work is exact)."""
    wall, cpu = time.perf_counter(), time.process_time()
    yield
    logging.getLogger("mminfer").info(
        "phase %s: %.2f s wall, %.2f s CPU; %s",
        name,
        time.perf_counter() - wall,
        time.process_time() - cpu,
        work,
    )
