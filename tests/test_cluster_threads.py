"""A cluster run's threads (mminfer.workflow.cluster): cores must be one node's CPUs, the check says
when
they are not and how to fix it; sinfo's answer is read, and its silence is not a guess."""

from __future__ import annotations

import os

from mminfer.workflow.cluster import node_cpus, threads_problem


def test_cores_equal_to_the_nodes_cpus_are_right():
    assert threads_problem(cores=2, max_threads=8, node=2) is None  # a one-node cluster, --profile
    assert threads_problem(cores=8, max_threads=8, node=8) is None


def test_cores_below_the_nodes_cpus_would_cap_the_threads():
    said = threads_problem(cores=2, max_threads=8, node=8)
    assert "the partition's nodes have 8" in said and "would get 2 threads" in said
    assert "--workflow-profile profiles/slurm" in said and "--cores 8" in said


def test_cores_above_the_nodes_cpus_would_leave_the_jobs_pending():
    said = threads_problem(cores=8, max_threads=8, node=2)
    assert "stay PENDING" in said and "--cores 2 --max-threads 2" in said


def test_without_sinfo_cores_below_max_threads_is_the_cap():
    assert "below max-threads (8)" in threads_problem(cores=2, max_threads=8, node=None)
    assert threads_problem(cores=8, max_threads=8, node=None) is None


def fake_sinfo(tmp_path, output: str, status: int = 0) -> dict:
    folder = tmp_path / "bin"
    folder.mkdir()
    script = folder / "sinfo"
    script.write_text(f"#!/bin/sh\nprintf '{output}'\nexit {status}\n", encoding="utf-8")
    script.chmod(0o755)
    return {"PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}


def test_node_cpus_are_the_smallest_nodes(tmp_path, monkeypatch):
    for key, value in fake_sinfo(tmp_path, "16\\n8\\n32+\\n").items():
        monkeypatch.setenv(key, value)
    assert node_cpus("cpu") == 8


def test_a_failing_sinfo_tells_nothing(tmp_path, monkeypatch):
    for key, value in fake_sinfo(tmp_path, "", status=1).items():
        monkeypatch.setenv(key, value)
    assert node_cpus("cpu") is None
