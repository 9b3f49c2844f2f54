"""Benchmark (not a rule script, never a test): what the workflow costs, measured side by side.

    python scripts/benchmark.py [--workdir DIR] [--cores 2] [--pairs 3] [--baseline 92d9bc9] [--cold-pairs 2]
                                [--skip-cold] [--json bench.json]

Run it alone on a quiet machine: it times whole processes, and another heavy job beside it changes
every figure. Everything is alternated in one run, so drift hits both sides of a ratio alike.

1. Cold demo, this checkout against ``--baseline`` (a git revision, checked out into a worktree):
   rounds of (baseline, new), each a fresh folder with the demo forced on; medians and new/baseline.
   The demo's quality checks run on every new cold build.
2. On two model sets — the demo (built by step 1) and a course-shaped random model (4 layers, hidden
   256, 8 query heads over 2 KV heads, MiniMind's tokenizer from ../shared/fixtures, skipped without
   it) — rounds of
     (a) a forced rerun of every measurement rule behind report.md (plots and report follow),
     (b) a forced rerun of the six task JSON files,
     (c) scripts/plain_task.py: the seven task outputs from one plain process,
   with medians and the ratios (a)/(c), (b)/(c); from Snakemake's benchmark files of every round,
   each job's median seconds (the sweep job against the time job); and the two fixed costs that one
   process per job pays before any work: Snakemake's start (a dry run) and `python -c "import torch"`;
   and a floor for (a) and for (b): the least wall time any scheduling of those jobs on the cores could
   give if each took its median seconds, printed as measured and again with every model job cut to
   nothing but importing torch.
Targets (printed beside the figures, never asserted): cold new/baseline <= 0.67, (a)/(c) <= 2.0,
(b)/(c) <= 1.2, sweep job <= 2 x time job.
"""

from __future__ import annotations

import argparse
import csv
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from mminfer.demo.corpus import GARAM_VILLAGE, CorpusSpec, build_corpus, write_corpus  # noqa: E402
from mminfer.demo.quality import quality_checks  # noqa: E402
from mminfer.io import read_json, write_json  # noqa: E402

TARGETS = {"cold new/baseline": 0.67, "(a)/(c)": 2.0, "(b)/(c)": 1.2, "sweep/time": 2.0}
TASK_RULES = ["cache", "time", "kvbytes", "temp", "topp"]
MEASUREMENT_RULES = [*TASK_RULES, "sweep", "capacity"]
ALONE_RULES = [
    "time",
    "sweep",
]  # the timing jobs take every core (`threads: workflow.cores`): they run alone
TASK_JSON = ["same.json", "count.json", "time.json", "kvbytes.json", "temp.json", "topp.json"]
MINIMIND_TOKENIZER = REPO.parent / "shared" / "fixtures" / "minimind-tokenizer"


def timed_run(command: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{result.stdout[-2000:]}\n{result.stderr[-4000:]}")
    return elapsed


def snakemake(args: list[str], cores: int, cwd: Path = REPO) -> float:
    """Targets and -R come first in ``args``; --config or --configfile and its values last."""
    return timed_run([sys.executable, "-m", "snakemake", "--cores", str(cores), *args], cwd)


def target_line(name: str, ratio: float) -> dict:
    target = TARGETS[name]
    print(
        f"  {name:18s} {ratio:6.2f}  (target <= {target}: {'met' if ratio <= target else 'NOT MET'})"
    )
    return {"ratio": ratio, "target": target, "met": ratio <= target}


def ratio_line(name: str, numerator: list[float], denominator: list[float]) -> dict:
    return target_line(name, statistics.median(numerator) / statistics.median(denominator))


def runs_line(name: str, seconds: list[float]) -> None:
    shown = ", ".join(f"{s:.1f}" for s in seconds)
    print(f"  {name:44s} median {statistics.median(seconds):7.1f} s  [{shown}]")


# --- 1. cold demo -------------------------------------------------------------------------------------


def demo_config(folder: Path) -> dict:
    return {"outdir": str(folder / "out"), "demo_dir": str(folder / "demo"), "demo": "always"}


def config_args(config: dict) -> list[str]:
    """--config key=value ..., which today's checkout and the baseline both read."""
    return ["--config", *(f"{key}={value}" for key, value in config.items())]


def cold_demo(workdir: Path, baseline: str, pairs: int, cores: int) -> tuple[dict, Path]:
    """Rounds of (baseline, new) cold demo runs; returns the figures and the last new run's folder."""
    baseline_tree = workdir / "baseline-checkout"
    subprocess.run(
        ["git", "worktree", "add", "--detach", str(baseline_tree), baseline],
        cwd=REPO,
        check=True,
        capture_output=True,
    )
    seconds = {"baseline": [], "new": []}
    checks = []
    try:
        for round_number in range(pairs):
            for name, tree in (("baseline", baseline_tree), ("new", REPO)):
                folder = workdir / f"cold-{name}-{round_number}"
                seconds[name].append(snakemake(config_args(demo_config(folder)), cores, cwd=tree))
                if name == "new":
                    facts = read_json(folder / "demo" / "corpus" / "facts.json")
                    checks.append(quality_checks(folder / "out", facts[GARAM_VILLAGE]))
                if (
                    name == "baseline" or round_number < pairs - 1
                ):  # only the last new build is used further
                    shutil.rmtree(folder)
    finally:
        subprocess.run(
            ["git", "worktree", "remove", "--force", str(baseline_tree)],
            cwd=REPO,
            capture_output=True,
        )
    print(f"cold demo, baseline {baseline} against this checkout ({pairs} rounds, alternated):")
    runs_line(f"baseline {baseline}", seconds["baseline"])
    runs_line("new", seconds["new"])
    result = {
        "seconds": seconds,
        "new/baseline": ratio_line("cold new/baseline", seconds["new"], seconds["baseline"]),
    }
    failed = [
        (number, name)
        for number, run in enumerate(checks)
        for name, check in run.items()
        if not check["ok"]
    ]
    for name, check in checks[-1].items():
        print(
            f"  {'ok ' if check['ok'] else 'FAIL'} {name}: {check['value']} (bar: {check['bar']})"
        )
    print(
        f"  quality checks: {'all pass' if not failed else f'FAILED {failed}'} on {len(checks)} new cold builds"
    )
    result["quality_checks"] = checks[-1]
    result["quality_failed"] = failed
    return result, workdir / f"cold-new-{pairs - 1}"


# --- 2. the workflow against one plain process ------------------------------------------------------


def course_shaped_set(workdir: Path) -> dict | None:
    """Random-weight checkpoints of the course model's shape, MiniMind's tokenizer, Korean validation
    documents from the demo corpus generator."""
    if not (MINIMIND_TOKENIZER / "tokenizer.json").is_file():
        print(f"course-shaped model skipped: MiniMind's tokenizer is not at {MINIMIND_TOKENIZER}")
        return None
    import torch

    from mminfer.loading import count_parameters, save_state_dict
    from mminfer.model import MiniMindConfig, MiniMindForCausalLM

    root = workdir / "course-shaped"
    shutil.copytree(MINIMIND_TOKENIZER, root / "tokenizer", dirs_exist_ok=True)
    write_corpus(
        build_corpus(CorpusSpec(seed=0, train_docs=10, val_docs=20, sft_conversations=10)),
        root / "data",
    )
    config = MiniMindConfig(
        hidden_size=256,
        num_hidden_layers=4,
        num_attention_heads=8,
        num_key_value_heads=2,
        vocab_size=6400,
    )
    for name, seed in (("pretrain", 0), ("sft", 1)):
        torch.manual_seed(seed)
        model = MiniMindForCausalLM(config)
        save_state_dict(model, root / f"{name}.pth")
    print(
        f"course-shaped model: {count_parameters(model):,} parameters (tied embeddings counted once)"
    )
    return {
        "outdir": str(root / "out"),
        "pretrain": str(root / "pretrain.pth"),
        "sft": str(root / "sft.pth"),
        "tokenizer": str(root / "tokenizer"),
        "val_data": str(root / "data" / "pretrain_val.jsonl"),
        "minimind_src": "/nonexistent",
        "backend": "builtin",
        "demo": "never",
    }


def job_seconds(outdir: Path) -> dict[str, float]:
    """Wall seconds of each job, from the rules' benchmark files (Snakemake's benchmark directive)."""
    seconds = {}
    for tsv in sorted((outdir / "benchmarks").glob("*.tsv")):
        with tsv.open(encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle, delimiter="\t"))
        if rows:
            seconds[tsv.stem] = float(rows[-1]["s"])
    return seconds


def median_jobs(rounds: list[dict[str, float]]) -> dict[str, float]:
    """Each job's median seconds over the rounds (a burst of load in one round moves no figure)."""
    return {job: statistics.median(found[job] for found in rounds) for job in rounds[-1]}


def schedule_floor(jobs: dict[str, float], cores: int, start: float) -> float:
    """The least wall time any scheduler could give these jobs on ``cores`` cores, each job as long as
    given (the benchmark gives each its median seconds): Snakemake's start, the jobs that run alone one
    after another, the rest packed perfectly (no core idle; dependencies ignored, so the bound only
    gets lower), the report last."""
    alone = sum(seconds for job, seconds in jobs.items() if job in ALONE_RULES)
    shared = [
        seconds for job, seconds in jobs.items() if job not in ALONE_RULES and job != "report"
    ]
    packed = max(max(shared, default=0.0), sum(shared) / cores)
    return start + alone + packed + jobs.get("report", 0.0)


def floor_line(
    name: str, jobs: dict[str, float], cores: int, start: float, torch_s: float, plain: float
) -> dict:
    """Two lower bounds for a forced rerun of ``jobs``, against (c): from the jobs' own seconds, and with
    every model job cut to nothing but a Python importing torch (plots and report as they were)."""
    from_jobs = schedule_floor(jobs, cores, start)
    only_import = {
        job: torch_s if job in MEASUREMENT_RULES else seconds for job, seconds in jobs.items()
    }
    from_import = schedule_floor(only_import, cores, start)
    print(
        f"  {name} floor: from its jobs' seconds {from_jobs:.1f} s = {from_jobs / plain:.2f} x (c); "
        f"if each model job only imported torch {from_import:.1f} s = {from_import / plain:.2f} x (c)"
    )
    return {"from_jobs_s": from_jobs, "only_import_s": from_import}


def against_plain(name: str, config: dict, pairs: int, cores: int, workdir: Path) -> dict:
    """(a), (b), (c) on one model set; the workflow and plain_task.py read the same config file."""
    config_file = workdir / f"{name}.yaml"
    write_json(config_file, config)  # JSON is YAML
    outdir = Path(config["outdir"])
    configured = ["--configfile", str(config_file)]
    snakemake([str(outdir / "report.md"), *configured], cores)  # bring everything up to date once
    report_target = [str(outdir / "report.md"), "-R", *MEASUREMENT_RULES]
    task_targets = [*(str(outdir / name) for name in TASK_JSON), "-R", *TASK_RULES]
    plain = [
        sys.executable,
        str(REPO / "scripts" / "plain_task.py"),
        "--outdir",
        str(workdir / f"plain-{name}"),
        "--threads",
        str(cores),
        "--config",
        str(REPO / "config.yaml"),
        str(config_file),
    ]
    seconds = {"a": [], "b": [], "c": [], "dry": [], "torch": []}
    rounds_a, rounds_b = [], []  # each job's seconds in every round of (a) and of (b)
    for _ in range(pairs):
        seconds["a"].append(snakemake([*report_target, *configured], cores))
        rounds_a.append(job_seconds(outdir))
        seconds["c"].append(timed_run(plain, REPO))
        seconds["b"].append(snakemake([*task_targets, *configured], cores))
        rounds_b.append({job: s for job, s in job_seconds(outdir).items() if job in TASK_RULES})
        seconds["dry"].append(snakemake(["-n", *report_target, *configured], cores))
        seconds["torch"].append(timed_run([sys.executable, "-c", "import torch"], REPO))
    jobs, task_jobs = median_jobs(rounds_a), median_jobs(rounds_b)
    print(f"{name}: {pairs} rounds of (a), (c), (b), then the two fixed costs")
    runs_line("(a) forced rerun of every rule behind report", seconds["a"])
    runs_line("(b) forced rerun of the six task JSON", seconds["b"])
    runs_line("(c) plain one-process script", seconds["c"])
    # What one process per job costs before any work: Snakemake's own start (a dry run of (a): parse,
    # DAG, no job) and a fresh Python importing torch, paid by every model job and once by (c).
    runs_line("Snakemake's start and DAG (dry run of (a))", seconds["dry"])
    runs_line("a Python process importing torch", seconds["torch"])
    result = {
        "seconds": seconds,
        "(a)/(c)": ratio_line("(a)/(c)", seconds["a"], seconds["c"]),
        "(b)/(c)": ratio_line("(b)/(c)", seconds["b"], seconds["c"]),
        "jobs_s": jobs,
    }
    print(
        "  jobs of (a), median seconds: " + ", ".join(f"{job} {s:.1f}" for job, s in jobs.items())
    )
    # Where (a) and (b) stand against the least any scheduling of one process per job could give.
    start, torch_s, plain_s = (statistics.median(seconds[key]) for key in ("dry", "torch", "c"))
    result["(a) floor"] = floor_line("(a)", jobs, cores, start, torch_s, plain_s)
    result["(b) floor"] = floor_line("(b)", task_jobs, cores, start, torch_s, plain_s)
    if "time" in jobs and "sweep" in jobs:
        result["sweep/time"] = target_line("sweep/time", jobs["sweep"] / jobs["time"])
    timing = read_json(outdir / "time.json")
    print(
        f"  time.json: speedup {timing['speedup']:.2f} at {timing['threads']} threads, verdict {timing['verdict']}, "
        f"CV {timing['cv_with_cache']:.1%} / {timing['cv_without_cache']:.1%}, {timing['runs_done']} runs"
    )
    return result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--workdir", default=None, help="folder for everything it builds (default: a temp dir)"
    )
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument(
        "--pairs", type=int, default=3, help="rounds of (a), (c), (b) per model set (default 3)"
    )
    parser.add_argument(
        "--baseline", default="92d9bc9", help="git revision the cold demo is compared with"
    )
    parser.add_argument(
        "--cold-pairs", type=int, default=2, help="rounds of (baseline, new) cold runs (default 2)"
    )
    parser.add_argument(
        "--skip-cold", action="store_true", help="build the demo once, compare nothing cold"
    )
    parser.add_argument("--json", default=None, help="also write the figures to this JSON file")
    args = parser.parse_args()

    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="mminfer-bench-")).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    print(
        f"machine: {platform.machine()}, {args.cores} cores, Python {platform.python_version()}; in {workdir}"
    )
    figures = {}
    if args.skip_cold:
        demo_folder = workdir / "demo-once"
        snakemake(config_args(demo_config(demo_folder)), args.cores)
    else:
        figures["cold"], demo_folder = cold_demo(
            workdir, args.baseline, args.cold_pairs, args.cores
        )

    figures["demo"] = against_plain(
        "demo", demo_config(demo_folder), args.pairs, args.cores, workdir
    )
    course = course_shaped_set(workdir)
    if course:
        figures["course_shaped"] = against_plain(
            "course-shaped", course, args.pairs, args.cores, workdir
        )
    if args.json:
        write_json(args.json, figures)


if __name__ == "__main__":
    main()
