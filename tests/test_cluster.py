"""The workflow on SLURM through profiles/slurm, and the same config run locally, figure for figure.

The cluster tests (marker ``cluster``) need a SLURM whose partition, profiles/slurm's, has an idle
node: ``scripts/slurm_local.sh start`` (as root) makes a one-node one on this machine, see
docs/cluster.md. Without one they skip and say why; with MMINFER_REQUIRE_CLUSTER=1 (set by .ci/run
once it has started the cluster) a missing cluster fails them instead. The micro demo is built and
measured on the cluster (its training jobs too), then locally into other folders; the exact figures
must agree. The profile checks at the end need only the executor plugin, no cluster.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest
import yaml
from snakemake_runner import run_snakemake

from mminfer.measurements import alone_rules, result_files, rules

REPO = Path(__file__).resolve().parents[1]
MICRO = REPO / "tests" / "data" / "micro.yaml"
PROFILE = REPO / "profiles" / "slurm"
# Jobs that load a model or train one: each must go through sbatch. The rest are localrules.
MODEL_RULES = {"demo_pretrain", "demo_sft", *rules()}  # rules(): every measurement's rule
TIMING_RULES = set(alone_rules())  # slurm_extra: --exclusive (the registry's `alone` rules)
WHOLE_NODE_RULES = {"demo_pretrain", "demo_sft", *TIMING_RULES}  # threads: workflow.cores
OUTPUTS = result_files()
CLUSTER_RUN_TIMEOUT_S = 420

pytestmark = pytest.mark.slow


def profile_partition() -> str:
    """The partition profiles/slurm submits to (default-resources: slurm_partition)."""
    profile = yaml.safe_load((PROFILE / "config.v8+.yaml").read_text(encoding="utf-8"))
    return str(profile["default-resources"]["slurm_partition"])


def idle_node_cpus(partition: str) -> tuple[int | None, str]:
    """The CPUs of the smallest idle node of the partition, or None and why there is none."""
    start = "scripts/slurm_local.sh start (as root) makes a one-node cluster here"
    if shutil.which("sinfo") is None:
        return None, f"no SLURM here (sinfo not found): {start}"
    command = ["sinfo", "--noheader", "--Node", "--partition", partition, "--states=idle"]
    command.append("--format=%c")
    try:
        result = subprocess.run(command, check=False, capture_output=True, text=True, timeout=20)
    except subprocess.TimeoutExpired:
        return None, f"sinfo did not answer within 20 s: {start}"
    if result.returncode != 0:
        said = result.stderr.strip().splitlines()[-1:] or [f"exit {result.returncode}"]
        return None, f"sinfo failed ({said[0]}): {start}"
    cpus = [int(word) for word in result.stdout.split() if word.isdigit()]
    if not cpus:
        return None, f"no idle node in SLURM partition {partition!r}: {start}"
    return min(cpus), ""


@pytest.fixture(scope="module")
def node_cpus() -> int:
    """The CPUs of one idle node of profiles/slurm's partition; skips (or fails) without one."""
    pytest.importorskip("snakemake_executor_plugin_slurm")
    cpus, why = idle_node_cpus(profile_partition())
    if cpus is None:
        if os.environ.get("MMINFER_REQUIRE_CLUSTER"):
            pytest.fail(f"MMINFER_REQUIRE_CLUSTER is set, but {why}")
        pytest.skip(why)
    return cpus


def micro_demo_args(root: Path, name: str) -> list[str]:
    """The micro demo, built and measured under root/name (a folder of its own per run)."""
    config = [f"outdir={root / name / 'out'}", f"demo_dir={root / name / 'demo'}"]
    return ["--configfile", str(MICRO), "--config", *config, "demo=always", "backend=builtin"]


def squeue_rows(run_id: str) -> list[dict]:
    """Every SLURM job of one Snakemake run (the plugin names each job after the run's ID)."""
    fields = {"id": "%i", "comment": "%k", "state": "%T", "cpus": "%C", "oversubscribe": "%h"}
    fields |= {"start": "%S", "end": "%e"}
    command = ["squeue", "--states=all", "--noheader", "--name", run_id]
    command += ["--format", "|".join(fields.values())]
    result = subprocess.run(command, capture_output=True, text=True, timeout=30, check=True)
    rows = [
        dict(zip(fields, line.split("|"))) for line in result.stdout.splitlines() if line.strip()
    ]
    for row in rows:
        # the plugin's comment: rule_<rule>, then _wildcards_<values> where the rule has wildcards
        row["rule"] = re.fullmatch(r"rule_(.+?)(?:_wildcards_.*)?", row["comment"]).group(1)
    return rows


def run_on_cluster(command: list[str], log: Path) -> str:
    """Run snakemake against the cluster, its output into log; on a timeout kill it and cancel its
    jobs (under SIGTERM it would wait for them, for ever if it could not read their status)."""
    with open(log, "w", encoding="utf-8") as out:
        process = subprocess.Popen(
            command,
            cwd=REPO,
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        try:
            process.wait(timeout=CLUSTER_RUN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    text = log.read_text(encoding="utf-8")
    run_id = re.search(r"SLURM run ID: (\S+)", text)
    if process.returncode != 0:
        if run_id:
            subprocess.run(
                ["scancel", "--name", run_id.group(1)], check=False, capture_output=True, timeout=30
            )
        raise AssertionError(
            f"snakemake on SLURM failed (exit {process.returncode}):\n{text[-5000:]}"
        )
    assert run_id, text[-3000:]
    return text


@pytest.fixture(scope="module")
def runs(node_cpus, tmp_path_factory) -> dict:
    """The micro demo through `snakemake --profile profiles/slurm`, then locally.

    The cluster run is the README's command with only a config file of paths: its cores come from
    profiles/default (this machine's CPUs, which on a one-node cluster are the node's); the local
    run of the same config gets as many.
    """
    root = tmp_path_factory.mktemp("cluster")
    paths = root / "paths.yaml"
    folders = {"outdir": str(root / "slurm" / "out"), "demo_dir": str(root / "slurm" / "demo")}
    paths.write_text(json.dumps(folders | {"demo": "always", "backend": "builtin"}), "utf-8")
    cluster_command = [sys.executable, "-m", "snakemake", "--profile", str(PROFILE)]
    cluster_command += ["--slurm-init-seconds-before-status-checks", "1"]
    cluster_command += ["--configfile", str(MICRO), str(paths)]
    text = run_on_cluster(cluster_command, root / "slurm.log")
    run_id = re.search(r"SLURM run ID: (\S+)", text).group(1)
    # "Job 5 has been submitted with SLURM jobid 14 (log: .../slurm_logs/rule_time/...)"
    submitted = {
        int(job): rule
        for job, rule in re.findall(
            r"has been submitted with SLURM jobid (\d+) \(log: \S*?slurm_logs/rule_(\w+)/", text
        )
    }
    local = subprocess.run(
        [
            sys.executable,
            "-m",
            "snakemake",
            "--cores",
            str(node_cpus),
            *micro_demo_args(root, "local"),
        ],
        check=False,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert local.returncode == 0, local.stderr[-5000:]
    return {
        "cpus": node_cpus,
        "text": text,
        "jobs": squeue_rows(run_id),
        "submitted": submitted,
        "slurm": root / "slurm" / "out",
        "local": root / "local" / "out",
    }


def read(folder: Path, name: str):
    """One JSON output of a results folder."""
    return json.loads((folder / name).read_text(encoding="utf-8"))


@pytest.mark.cluster
def test_every_model_job_goes_through_sbatch_and_completes(runs):
    jobs = runs["jobs"]
    assert sorted(job["rule"] for job in jobs) == sorted(MODEL_RULES)  # each once, no light rule
    assert {job["rule"]: job["state"] for job in jobs} == dict.fromkeys(MODEL_RULES, "COMPLETED")
    # what Snakemake said it submitted is what SLURM ran
    assert runs["submitted"] == {int(job["id"]): job["rule"] for job in jobs}
    assert "steps (100%) done" in runs["text"]


@pytest.mark.cluster
def test_timing_and_training_jobs_take_a_whole_node(runs):
    jobs, cpus = runs["jobs"], runs["cpus"]
    assert {job["rule"]: int(job["cpus"]) for job in jobs} == {
        rule: cpus if rule in WHOLE_NODE_RULES else 1 for rule in MODEL_RULES
    }
    assert {job["rule"] for job in jobs if job["oversubscribe"] == "NO"} == TIMING_RULES
    span = {
        job["rule"]: (datetime.fromisoformat(job["start"]), datetime.fromisoformat(job["end"]))
        for job in jobs
    }
    for rule in TIMING_RULES:  # nothing of the run beside a timing job
        start, end = span[rule]
        beside = [
            other for other, (s, e) in span.items() if other != rule and s < end and e > start
        ]
        assert beside == [], (rule, span)
    for name in ("time.json", "sweep.json", "serve.json"):
        assert read(runs["slurm"], name)["threads"] == cpus, name


@pytest.mark.cluster
def test_cluster_run_writes_every_output(runs):
    assert [name for name in OUTPUTS if not (runs["slurm"] / name).is_file()] == []


@pytest.mark.cluster
def test_cluster_figures_equal_a_local_run_of_the_same_config(runs):
    slurm, local = runs["slurm"], runs["local"]

    def pick(name, keys):
        return [{key: read(folder, name)[key] for key in keys} for folder in (slurm, local)]

    on_cluster, here = pick("same.json", ["same_ids", "ids"])
    assert on_cluster == here
    on_cluster, here = pick("count.json", ["fed_with_cache", "fed_without_cache"])
    assert on_cluster == here
    on_cluster, here = pick("kvbytes.json", ["measured_bytes", "formula_bytes", "k_shape"])
    assert on_cluster == here
    temps = [
        {t: (v["distinct"], v["answers"]) for t, v in read(folder, "temp.json").items()}
        for folder in (slurm, local)
    ]
    assert temps[0] == temps[1] and list(temps[0]) == ["0.3", "1.0", "1.5"]
    assert read(slurm, "topp.json") == read(local, "topp.json")
    # the demo models trained by the cluster's jobs are byte for byte the local ones
    for name in ("same.json", "kvbytes.json"):
        assert read(slurm, name)["run"]["sha256"] == read(local, name)["run"]["sha256"], name


# --- the profile itself: no cluster needed ------------------------------------------------------


# Every SLURM client tool the executor plugin (or mminfer/workflow/cluster.py) may call while
# planning.
SLURM_TOOLS = ("sinfo", "sacct", "squeue", "sbatch", "scontrol", "srun")


@pytest.fixture(scope="module")
def slurm_unanswered(tmp_path_factory) -> dict:
    """An environment whose SLURM tools all exist but cannot answer, as on a login node whose
    controller is down: the profile's checks then do not depend on whether a cluster runs here,
    nor on whether SLURM is installed at all (a laptop has none of these tools; the plugin wants
    `sacct` or `squeue` to be found before it plans)."""
    folder = tmp_path_factory.mktemp("no-slurm")
    for tool in SLURM_TOOLS:
        fake = folder / tool
        fake.write_text(
            f"#!/bin/sh\necho '{tool}: no cluster here' >&2\nexit 1\n", encoding="utf-8"
        )
        fake.chmod(0o755)
    return {**os.environ, "PATH": f"{folder}{os.pathsep}{os.environ.get('PATH', '')}"}


def snakemake_demo(
    *args: str, outdir: Path = Path("/nonexistent/out"), env: dict | None = None
) -> subprocess.CompletedProcess:
    """snakemake on the micro demo with the given arguments (targets first), from the repository."""
    pytest.importorskip("snakemake_executor_plugin_slurm")
    config = [f"outdir={outdir}", f"demo_dir={outdir.parent / 'demo'}", "demo=always"]
    command = [*args, "--configfile", str(MICRO), "--config", *config]
    return run_snakemake(command, cwd=REPO, timeout=120, env=env)  # tests/snakemake_runner.py


def planned_job(plan: str, rule: str) -> str:
    """The block a dry run prints for the first job of a rule."""
    return plan.split(f"rule {rule}:")[1].split("\nrule ")[0]


def capped_message(here: int) -> str:
    """What the workflow says when cores (this machine's CPUs) is below max-threads (one more)."""
    return f"cores ({here}) must be the CPUs of one node, but it is below max-threads ({here + 1})"


def test_slurm_profile_under_profile_flag_stops_before_any_job_naming_the_fix(
    tmp_path, slurm_unanswered
):
    from snakemake.utils import available_cpu_count

    # nodes bigger than this machine: under --profile, profiles/default's `cores: all`
    # would cap them
    here, outdir = available_cpu_count(), tmp_path / "out"
    result = snakemake_demo(
        str(outdir / "cache.py"),  # a local job, were the check to let the run through
        "--profile",
        "profiles/slurm",
        "--max-threads",
        str(here + 1),
        outdir=outdir,
        env=slurm_unanswered,
    )
    said = result.stdout + result.stderr
    assert result.returncode != 0
    assert capped_message(here) in said
    assert "snakemake --workflow-profile profiles/slurm" in said and f"--cores {here + 1}" in said
    assert not outdir.exists() and "Traceback" not in said


def test_slurm_profile_under_profile_flag_warns_in_a_dry_run(slurm_unanswered):
    from snakemake.utils import available_cpu_count

    here = available_cpu_count()
    result = snakemake_demo(
        "-n", "--profile", "profiles/slurm", "--max-threads", str(here + 1), env=slurm_unanswered
    )
    assert result.returncode == 0, result.stderr[-3000:]
    said = result.stdout + result.stderr  # a dry run logs to stdout
    assert capped_message(here) in said and "A run (without -n) stops here" in said


def test_slurm_profile_under_profile_flag_runs_with_cores_given(slurm_unanswered):
    result = snakemake_demo(
        "-n", "--profile", "profiles/slurm", "--cores", "8", env=slurm_unanswered
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "threads: 8" in planned_job(result.stdout, "time")
    assert "mminfer:" not in result.stdout + result.stderr


@pytest.fixture(scope="module")
def workflow_plan(slurm_unanswered) -> str:
    """The dry run's plan under --workflow-profile profiles/slurm."""
    result = snakemake_demo("-n", "--workflow-profile", "profiles/slurm", env=slurm_unanswered)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "mminfer:" not in result.stdout + result.stderr
    return result.stdout


def test_slurm_workflow_profile_gives_the_whole_node_jobs_its_cores(workflow_plan):
    # a job of one thread shows no threads line
    threads = {
        rule: re.findall(r"threads: (\d+)", planned_job(workflow_plan, rule))
        for rule in MODEL_RULES
    }
    assert threads == {rule: ["8"] if rule in WHOLE_NODE_RULES else [] for rule in MODEL_RULES}


def test_every_timing_rule_and_no_other_asks_for_a_node_to_itself(workflow_plan):
    asks = {
        rule
        for rule in MODEL_RULES
        if "slurm_extra=--exclusive" in planned_job(workflow_plan, rule)
    }
    assert asks == TIMING_RULES


def test_slurm_profile_plans_no_account_until_one_is_set(workflow_plan):
    assert "slurm_partition=cpu" in workflow_plan and "slurm_account" not in workflow_plan
