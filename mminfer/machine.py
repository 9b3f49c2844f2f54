"""What the machine is: its cores, its load, its memory caches and the memory free for caches.

Read from the operating system (Linux's /proc and /sys, a cgroup's limit) or from torch on CUDA;
every figure says where it came from, and None or "unknown" where the system does not say.
"""

from __future__ import annotations

import os
from pathlib import Path

import torch

from mminfer.records.serve import CacheLevel


def load_average() -> list[float] | None:
    """The machine's 1-, 5- and 15-minute load averages (None where the system has none)."""
    try:
        return [round(value, 2) for value in os.getloadavg()]
    except (AttributeError, OSError):  # no getloadavg (Windows), or the system cannot tell
        return None


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
