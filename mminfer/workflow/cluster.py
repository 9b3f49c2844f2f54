"""A cluster run's threads: the timing and training jobs must get a whole node, no more, no less.

Those rules take ``threads: workflow.cores``, and Snakemake caps every job's threads at ``cores``.
On a cluster (``--jobs`` given), ``cores`` must therefore be the CPUs of one node of the partition.
Fewer, and the jobs get fewer threads than a node (profiles/default's ``cores: all`` gives the login
node's CPUs, and Snakemake also loads it beside ``--profile profiles/slurm``); more, and SLURM keeps
them PENDING for ever. sinfo says how many CPUs the partition's nodes have; where it cannot, a
``cores`` below ``max-threads`` (the profile sets both to one number) still shows the cap.
Imports nothing heavy: rules/common.smk calls it while Snakemake builds the DAG.
"""

from __future__ import annotations

import subprocess

FIX = "run `snakemake --workflow-profile profiles/slurm` with node_cpus set to"


def node_cpus(partition: str | None) -> int | None:
    """The CPUs of the smallest node of ``partition`` (sinfo), or None where sinfo cannot say."""
    command = ["sinfo", "--noheader", "--Node", "--format=%c"]
    if partition:
        command += ["--partition", partition]
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if result.returncode != 0:
        return None
    cpus = [int(word.rstrip("+")) for word in result.stdout.split() if word.rstrip("+").isdigit()]
    return min(cpus, default=None)


def threads_problem(cores: int | None, max_threads: int | None, node: int | None) -> str | None:
    """Why a cluster run's whole-node jobs would get the wrong threads, or None when they would
    not. ``node``: the CPUs of the partition's nodes, None where unknown."""
    cores = cores or 0
    if node is not None and cores < node:
        return (
            f"mminfer: on a cluster, cores ({cores}) must be the CPUs of one node, but the "
            f"partition's nodes have {node}: the timing and training jobs would get {cores} "
            "threads. Under --profile, Snakemake also loads profiles/default, whose 'cores: all' "
            f"(this machine's CPUs) wins; {FIX} {node}, or give --cores {node} (docs/cluster.md)."
        )
    if node is not None and cores > node:
        return (
            f"mminfer: on a cluster, cores ({cores}) must be the CPUs of one node, but the "
            f"partition's nodes have {node}: the timing and training jobs would ask for {cores} "
            f"CPUs and stay PENDING. Set node_cpus in profiles/slurm to {node}, or give --cores "
            f"{node} --max-threads {node} (docs/cluster.md)."
        )
    if node is None and max_threads and cores < max_threads:
        return (
            f"mminfer: on a cluster, cores ({cores}) must be the CPUs of one node, but it is "
            f"below max-threads ({max_threads}): the timing and training jobs would get {cores} "
            "threads. Under --profile, Snakemake also loads profiles/default, whose 'cores: all' "
            f"(this machine's CPUs) wins; {FIX} your nodes' CPUs, or give --cores {max_threads} "
            "(docs/cluster.md)."
        )
    return None
