"""Benchmark (not a rule script, never a test): what the workflow costs, measured side by side.

    python scripts/benchmark.py [--workdir DIR] [--cores 2] [--pairs 2] [--sets course,...]
        [--demo] [--json bench.json] [--time-job-against CHECKOUT] [--rules anatomy,...]
        [--report-md]

Run it alone on a quiet machine (it times whole processes); everything is alternated in one run,
so drift hits both sides of a ratio alike.

Model sets (random weights made here, MiniMind's tokenizer from ../shared/fixtures, Korean
validation documents from the demo corpus generator):
  course          4 layers, hidden 256, 8 query heads over 2 KV heads (the course model's shape)
  minimind-3      MiniMind's release: 8 layers, hidden 768, 8 query heads over 4 KV heads
  minimind-3-moe  the same with 4 experts, one per token (MiniMind's MoE release)

For course and minimind-3, rounds of
  (a) a forced rerun of every measurement rule behind report.md (plots and report follow),
  (c) scripts/plain_task.py: the seven task outputs from one plain process,
with medians and (a)/(c); from Snakemake's benchmark files, each job's median seconds over the
rounds, the temp job (temp.json and sampler.json from one load and one set of draws) against the
temp and sampler jobs it replaced, and each beyond-task job against the time job; the floor of
(a), the least wall time any scheduling of its jobs on the cores could give. For minimind-3-moe,
one run of (a) and each job's seconds: what a learner with a real MiniMind waits for. ``--demo``
also builds the embedded demo once and checks its quality bar on the result.

``--time-job-against CHECKOUT`` (a checkout of an earlier commit: ``git worktree add DIR REV``)
times only the time job instead: rounds of (this checkout's scripts/time_generation.py, the
earlier one's), A B A B on each model set, both with the same launcher and threads; it prints each
side's job seconds, the rounds its adaptive timing ran, its seconds outside the timed runs,
and the medians of the timed runs, with now / before for each.

``--report-md``: rounds of (b) the design card's command, ``snakemake --cores 1
<outdir>/report.md`` into an empty results folder, against (c) plain_task.py at one thread, A B A B
on each model set (issue 57: (b)/(c) at most 2.5 on course, 2 on minimind-3), and each job's
seconds.

``--rules RULE,...``: only those rules' jobs, forced, ``--pairs`` rounds on each model set, each
job's median seconds from its benchmark file (the anatomy job beside its target); with time among
them, anatomy, remedies and lookup each against it (issue 48: at most 1.5x at ``--time-rounds 3``,
which sets time.runs = time.max_runs in the model sets; issue 59: lookup at most 1x). The remedies
job runs twice a round, with remedies.compile on (its default) and off, both printed beside the time
job with no target: compile's cost is the finding (issue 60).

Targets (printed, never asserted): each beyond-task job <= time, at every size. (a)/(c) and
(sweep + serve) / time have none: plain_task.py does not run the sampler check's uncached sampled
generation; serve and the sweep are each held to the time job.
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
from mminfer.measurements import MEASUREMENTS, REPORT, alone_rules, measurement, rules  # noqa: E402

MEASUREMENT_RULES = rules()  # every rule that writes a measurement (mminfer.measurements)
ALONE_RULES = alone_rules()  # the timing jobs take every core: they run alone
MINIMIND_TOKENIZER = REPO.parent / "shared" / "fixtures" / "minimind-tokenizer"
KV_2 = {"num_key_value_heads": 2}
SHAPES = {
    "course": {"hidden_size": 256, "num_hidden_layers": 4, "num_attention_heads": 8} | KV_2,
    "minimind-3": {"hidden_size": 768, "num_hidden_layers": 8},
    "minimind-3-moe": {"hidden_size": 768, "num_hidden_layers": 8, "use_moe": True},
}
BEYOND_TASK_TARGET = 1.0  # each beyond-task job / time
# with --rules time,...: job / time (issue 48: anatomy, remedies; issue 59: lookup); the
# remedies job with compile on (the default) and off, printed without a target (issue 60)
AGAINST_TIME_TARGET = {"anatomy": 1.5, "remedies": 1.5, "lookup": 1.0}
COMPILE_OFF = "remedies (compile off)"
# The anatomy job's seconds (issue 34), a model set's whole job: counts, probes, its load.
ANATOMY_TARGET_S = {"course": 10.0, "minimind-3": 60.0}
# docs/benchmark.md before the temp job wrote sampler.json from its own draws: temp + sampler
TEMP_SAMPLER_BEFORE_S = {"minimind-3": 19.1 + 93.1}


def beyond_task_rules() -> list[str]:
    """The rules that write none of the task's files (sweep, capacity, serve, ...)."""
    task_rules = {entry.rule for entry in MEASUREMENTS if entry.task}
    return [rule for rule in rules() if rule not in task_rules]


def job_lines(name: str, jobs: dict[str, float]) -> dict:
    """The temp job (temp.json and sampler.json) against the two jobs it replaced, and each
    beyond-task job beside the time job, as figures."""
    figures, before = {"temp_s": jobs["temp"]}, TEMP_SAMPLER_BEFORE_S.get(name)
    was = "" if before is None else f" against temp + sampler {before:.1f} s before (benchmark.md)"
    print(f"  temp job (temp.json + sampler.json, one load): {jobs['temp']:.1f} s{was}")
    for rule in beyond_task_rules():
        ratio = jobs[rule] / jobs["time"]
        figures[f"{rule}/time"] = target_line(f"{rule} / time", ratio, BEYOND_TASK_TARGET)
    return figures


def timed_run(command: list[str], cwd: Path = REPO) -> float:
    start = time.perf_counter()
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{result.stdout[-2000:]}\n{result.stderr[-4000:]}")
    return time.perf_counter() - start


def flags(**named) -> list[str]:
    """A hand run's flags: ``--name value`` for each of ``named`` (``val_data``: ``--val-data``)."""
    return [
        item for key, value in named.items() for item in (f"--{key.replace('_', '-')}", str(value))
    ]


def snakemake(args: list[str], cores: int) -> float:
    """Targets and -R come first in ``args``; --configfile and its value last."""
    return timed_run([sys.executable, "-m", "snakemake", "--cores", str(cores), *args])


def target_line(name: str, value: float, target: float | None) -> dict:
    met = None if target is None else value <= target
    note = "" if met is None else f"  (target <= {target}: {'met' if met else 'NOT MET'})"
    print(f"  {name:30s} {value:6.2f}{note}")
    return {"value": value, "target": target, "met": met}


def runs_line(name: str, seconds: list[float]) -> None:
    shown = ", ".join(f"{s:.1f}" for s in seconds)
    print(f"  {name:44s} median {statistics.median(seconds):7.1f} s  [{shown}]")


# --- the model sets ------------------------------------------------------------------------------


def model_set(workdir: Path, name: str) -> Path | None:
    """Random-weight pretrain and SFT checkpoints of one shape, with the shared inputs: the config
    file the workflow and plain_task.py both read (None without the tokenizer)."""
    if not (MINIMIND_TOKENIZER / "tokenizer.json").is_file():
        print(f"{name} skipped: MiniMind's tokenizer is not at {MINIMIND_TOKENIZER}")
        return None
    import torch

    from mminfer.model.loading import count_parameters, save_state_dict
    from mminfer.model.twin import MiniMindConfig, MiniMindForCausalLM

    root = workdir / name
    shutil.copytree(MINIMIND_TOKENIZER, root / "tokenizer", dirs_exist_ok=True)
    corpus = build_corpus(CorpusSpec(seed=0, train_docs=10, val_docs=20, sft_conversations=10))
    write_corpus(corpus, root / "data")
    config = MiniMindConfig(vocab_size=6400, **SHAPES[name])
    for stage, seed in (("pretrain", 0), ("sft", 1)):
        torch.manual_seed(seed)
        model = MiniMindForCausalLM(config)
        save_state_dict(model, root / f"{stage}.pth")
    print(f"{name}: {count_parameters(model):,} parameters, random weights")
    files = {
        "outdir": "out",
        "pretrain": "pretrain.pth",
        "sft": "sft.pth",
        "tokenizer": "tokenizer",
    }
    settings = {key: str(root / path) for key, path in files.items()}
    settings |= {"val_data": str(root / "data" / "pretrain_val.jsonl"), "demo": "never"}
    settings |= {"minimind_src": "/nonexistent", "backend": "builtin"}
    config_file = root / "config.yaml"
    write_json(config_file, settings)  # JSON is YAML
    return config_file


def demo_set(workdir: Path, cores: int) -> Path:
    """The embedded demo built once (its cold build timed), its quality bar checked."""
    folder = workdir / "demo"
    settings = {"outdir": str(folder / "out"), "demo_dir": str(folder / "demo"), "demo": "always"}
    config_file = workdir / "demo.yaml"
    write_json(config_file, settings)
    seconds = snakemake(["--configfile", str(config_file)], cores)
    facts = read_json(folder / "demo" / "corpus" / "facts.json")
    checks = quality_checks(folder / "out", facts[GARAM_VILLAGE])
    print(f"demo: cold build and every output in {seconds:.1f} s")
    for name, c in checks.items():
        print(f"  {'ok ' if c['ok'] else 'FAIL'} {name}: {c['value']} (bar: {c['bar']})")
    return config_file


# --- measuring -----------------------------------------------------------------------------------


def job_seconds(outdir: Path) -> dict[str, float]:
    """Wall seconds of each job, from the rules' benchmark files (Snakemake's ``benchmark:``)."""
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
    """The least wall time any scheduler could give these jobs on ``cores`` cores: Snakemake's
    start, the jobs that run alone one after another, the rest packed perfectly (no core idle;
    dependencies ignored, so the bound only gets lower), the report last."""
    alone = sum(seconds for job, seconds in jobs.items() if job in ALONE_RULES)
    shared = [s for job, s in jobs.items() if job not in ALONE_RULES and job != "report"]
    packed = max(max(shared, default=0.0), sum(shared) / cores)
    return start + alone + packed + jobs.get("report", 0.0)


def floor_line(name: str, jobs: dict, cores: int, start: float, torch_s: float, plain: float):
    """Two lower bounds for a forced rerun of ``jobs``, against (c): from the jobs' own seconds,
    and with every model job cut to a Python importing torch (plots and report kept)."""
    from_jobs = schedule_floor(jobs, cores, start)
    only_import = {job: torch_s if job in MEASUREMENT_RULES else s for job, s in jobs.items()}
    from_import = schedule_floor(only_import, cores, start)
    print(
        f"  {name} floor: from its jobs' seconds {from_jobs:.1f} s = "
        f"{from_jobs / plain:.2f} x (c); if each model job only imported torch "
        f"{from_import:.1f} s = {from_import / plain:.2f} x (c)"
    )
    return {"from_jobs_s": from_jobs, "only_import_s": from_import}


def forced_report(config_file: Path, cores: int) -> tuple[float, dict[str, float]]:
    """(a): every measurement rule behind report.md forced; its seconds and each job's."""
    outdir = Path(read_json(config_file)["outdir"])
    target = [str(outdir / REPORT), "-R", *MEASUREMENT_RULES]
    seconds = snakemake([*target, "--configfile", str(config_file)], cores)
    return seconds, job_seconds(outdir)


def plain_command(config_file: Path, outdir: Path, threads: int) -> list[str]:
    """(c): scripts/plain_task.py into ``outdir`` at ``threads``, reading the workflow's config."""
    return [
        sys.executable,
        str(REPO / "scripts" / "plain_task.py"),
        *flags(outdir=outdir, threads=threads),
        *["--config", str(REPO / "config.yaml"), str(config_file)],
    ]


def against_plain(name: str, config_file: Path, pairs: int, cores: int, workdir: Path) -> dict:
    """Rounds of (a) and (c) on one model set; the workflow and plain_task.py read one config."""
    outdir = Path(read_json(config_file)["outdir"])
    snakemake([str(outdir / REPORT), "--configfile", str(config_file)], cores)  # up to date
    plain = plain_command(config_file, workdir / f"plain-{name}", cores)
    dry = [str(outdir / REPORT), "-R", *MEASUREMENT_RULES, "-n", "--configfile"]
    seconds = {"a": [], "c": [], "dry": [], "torch": []}
    rounds = []
    for _ in range(pairs):
        workflow_s, jobs = forced_report(config_file, cores)
        seconds["a"].append(workflow_s)
        rounds.append(jobs)
        seconds["c"].append(timed_run(plain))
        seconds["dry"].append(snakemake([*dry, str(config_file)], cores))
        seconds["torch"].append(timed_run([sys.executable, "-c", "import torch"]))
    jobs = median_jobs(rounds)
    print(f"{name}: {pairs} rounds of (a), (c), then the fixed costs")
    runs_line("(a) forced rerun of every rule behind report", seconds["a"])
    runs_line("(c) plain one-process script", seconds["c"])
    runs_line("Snakemake's start and DAG (dry run of (a))", seconds["dry"])
    runs_line("a Python process importing torch", seconds["torch"])
    ratio = statistics.median(seconds["a"]) / statistics.median(seconds["c"])
    result = {"seconds": seconds, "jobs_s": jobs}
    result["(a)/(c)"] = target_line("(a)/(c)", ratio, None)  # no target: the docstring says why
    print("  jobs of (a), median seconds: " + ", ".join(f"{j} {s:.1f}" for j, s in jobs.items()))
    sweep_serve = (jobs["sweep"] + jobs["serve"]) / jobs["time"]
    # no target: each of sweep and serve is held to time instead
    result["(sweep+serve)/time"] = target_line("(sweep + serve) / time", sweep_serve, None)
    start, torch_s, plain_s = (statistics.median(seconds[k]) for k in ("dry", "torch", "c"))
    result["(a) floor"] = floor_line("(a)", jobs, cores, start, torch_s, plain_s)
    result["jobs"] = job_lines(name, jobs)
    t = read_json(outdir / measurement("time").filename)
    print(f"  time.json: speedup {t['speedup']:.2f} at {t['threads']} threads, {t['verdict']}")
    print(f"  CV {t['cv_with_cache']:.1%} / {t['cv_without_cache']:.1%}, {t['runs_done']} runs")
    return result


REPORT_MD_TARGET = {"course": 2.5, "minimind-3": 2.0}  # (b) / (c), issue 57


def report_md_against_plain(name: str, config_file: Path, pairs: int, workdir: Path) -> dict:
    """Rounds of (b) the design card's command, ``snakemake --cores 1 <outdir>/report.md`` into an
    empty results folder each round, and (c) plain_task.py at one thread, A B A B: what a
    learner who asks for the task's report waits for, against one plain process."""
    plain = plain_command(config_file, workdir / f"plain1-{name}", 1)
    seconds = {"b": [], "c": []}
    rounds = []
    for number in range(pairs):
        outdir = workdir / f"report-md-{name}-{number}"
        target = [str(outdir / REPORT), "--config", f"outdir={outdir}"]
        seconds["b"].append(snakemake([*target, "--configfile", str(config_file)], 1))
        rounds.append(job_seconds(outdir))
        seconds["c"].append(timed_run(plain))
    jobs = median_jobs(rounds)
    print(f"{name}: {pairs} rounds of (b) report.md into an empty folder, (c), at one core")
    runs_line("(b) snakemake --cores 1 <outdir>/report.md", seconds["b"])
    runs_line("(c) plain one-process script, 1 thread", seconds["c"])
    ratio = statistics.median(seconds["b"]) / statistics.median(seconds["c"])
    result = {"seconds": seconds, "jobs_s": jobs}
    result["(b)/(c)"] = target_line("(b)/(c)", ratio, REPORT_MD_TARGET.get(name))
    print("  jobs of (b), median seconds: " + ", ".join(f"{j} {s:.1f}" for j, s in jobs.items()))
    return result


def jobs_only(name: str, config_file: Path, cores: int) -> dict:
    """One run of (a): each job's seconds (no yardstick)."""
    outdir = Path(read_json(config_file)["outdir"])
    snakemake([str(outdir / REPORT), "--configfile", str(config_file)], cores)
    seconds, jobs = forced_report(config_file, cores)
    print(f"{name}: (a) forced rerun of every rule behind report in {seconds:.1f} s")
    print("  jobs, seconds: " + ", ".join(f"{job} {s:.1f}" for job, s in jobs.items()))
    return {"seconds": seconds, "jobs_s": jobs, "jobs": job_lines(name, jobs)}


def rules_only(name: str, config_file: Path, rules: list[str], pairs: int, cores: int) -> dict:
    """``pairs`` forced runs of only ``rules``' jobs: each job's median seconds."""
    outdir = Path(read_json(config_file)["outdir"])
    targets = [str(outdir / entry.filename) for entry in MEASUREMENTS if entry.rule in rules]
    snakemake([*targets, "--configfile", str(config_file)], cores)  # their inputs up to date
    # the remedies job with compile off too (issue 60: compile's cost is the finding): the same
    # settings but remedies.compile, one more forced job a round
    uncompiled = config_file.with_name(f"{config_file.stem}-compile-off.json")
    write_json(uncompiled, read_json(config_file) | {"remedies": {"compile": False}})
    rounds = []
    for _ in range(pairs):
        off = {}
        if "remedies" in rules:  # first, so that the folder ends with the default's remedies.json
            remedies_json = str(outdir / "remedies.json")
            snakemake([remedies_json, "-R", "remedies", "--configfile", str(uncompiled)], cores)
            off[COMPILE_OFF] = job_seconds(outdir)["remedies"]
        snakemake([*targets, "-R", *rules, "--configfile", str(config_file)], cores)
        found = job_seconds(outdir)
        rounds.append({rule: found[rule] for rule in rules} | off)
    jobs = median_jobs(rounds)
    print(f"{name}: {pairs} forced runs of {', '.join(rules)}")
    figures = {"jobs_s": jobs}
    for rule, seconds in jobs.items():
        runs_line(f"{rule} job", [found[rule] for found in rounds])
        if rule == "anatomy":
            target = ANATOMY_TARGET_S.get(name)  # the anatomy job's seconds, beside its target
            figures["anatomy"] = target_line("anatomy job (s)", seconds, target)
        if rule in (*AGAINST_TIME_TARGET, COMPILE_OFF) and "time" in jobs:
            ratio, target = seconds / jobs["time"], AGAINST_TIME_TARGET.get(rule)
            figures[f"{rule}/time"] = target_line(f"{rule} job / time job", ratio, target)
    return figures


# Runs a checkout's script with that checkout's mminfer, whatever the environment installed
# (an editable install's finder would import this checkout's): argv is [checkout, script, args...].
LAUNCH = (
    "import runpy, sys; "
    "sys.meta_path[:] = [f for f in sys.meta_path "
    "if not getattr(f, '__module__', '').startswith('__editable__')]; "
    "sys.path.insert(0, sys.argv[1]); script = sys.argv[2]; sys.argv = sys.argv[2:]; "
    "runpy.run_path(script, run_name='__main__')"
)


# The time job's rounds, fixed on both sides (time.runs = time.max_runs): a noisy round would
# otherwise buy up to time.max_runs more, and the job's seconds would measure the machine's noise
# instead of the job's own work.
TIME_JOB_ROUNDS = 3


def time_job(checkout: Path, config_file: Path, out: Path, cores: int) -> dict:
    """One run of ``checkout``'s time job by hand on a model set: its seconds and its record."""
    settings = read_json(config_file)
    script = checkout / "scripts" / "time_generation.py"
    hand_flags = flags(
        pretrain=settings["pretrain"],
        tokenizer=settings["tokenizer"],
        val_data=settings["val_data"],
        out=out,
        backend="builtin",
        threads=cores,
        runs=TIME_JOB_ROUNDS,
        max_runs=TIME_JOB_ROUNDS,
    )
    seconds = timed_run([sys.executable, "-c", LAUNCH, str(checkout), str(script), *hand_flags])
    record = read_json(out)
    rounds = record["warmup"] + record["runs_done"]
    runs = sum(record["with_cache_runs_s"]) + sum(record["without_cache_runs_s"])
    medians = {key: record[key] for key in ("with_cache_s", "without_cache_s")}
    return {"seconds": seconds, "rounds": rounds, "runs_s": runs, **medians}


def time_job_against(before: Path, name: str, config_file: Path, pairs: int, cores: int) -> dict:
    """Rounds of the time job alone on one model set, now against before, A B B A: the order
    flips every round, so that a drift of the machine's speed lands on both sides."""
    sides = {"now": REPO, "before": before.resolve()}
    results = {side: [] for side in sides}
    folder = config_file.parent
    for round_index in range(pairs):
        order = list(sides) if round_index % 2 == 0 else list(reversed(sides))
        for side in order:
            out = folder / f"time-{side}.json"
            results[side].append(time_job(sides[side], config_file, out, cores))
    print(f"{name}: {pairs} rounds of (now, before), the order flipped each round (A B B A),")
    print(f"  {TIME_JOB_ROUNDS} timed rounds each (no extra rounds), at {cores} threads")
    summary = {}
    for key in ("seconds", "rounds", "with_cache_s", "without_cache_s"):
        medians = {side: statistics.median(r[key] for r in results[side]) for side in sides}
        shown = {side: ", ".join(f"{r[key]:.3g}" for r in results[side]) for side in sides}
        ratio = medians["now"] / medians["before"]
        print(
            f"  {key:16s} now {medians['now']:8.3f} [{shown['now']}]  before "
            f"{medians['before']:8.3f} [{shown['before']}]  now / before {ratio:.3f}"
        )
        summary[key] = {"now": medians["now"], "before": medians["before"], "ratio": ratio}
    outside = {s: statistics.median(r["seconds"] - r["runs_s"] for r in results[s]) for s in sides}
    print("  job seconds outside the timed runs (start, warm-ups, the streamer's paired runs): now")
    print(f"  {outside['now']:.2f}, before {outside['before']:.2f}")
    summary["outside_s"] = outside
    summary["results"] = results
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--workdir", default=None, help="folder for all it builds (default: temp)")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--pairs", type=int, default=2, help="rounds of (a), (c) (default 2)")
    parser.add_argument("--sets", default=",".join(SHAPES), help="model sets, comma-separated")
    parser.add_argument("--demo", action="store_true", help="also build the demo, check quality")
    parser.add_argument("--json", default=None, help="also write the figures to this JSON file")
    against = "a checkout of an earlier commit: time only the time job, now against it"
    parser.add_argument("--time-job-against", default=None, help=against)
    parser.add_argument("--rules", default=None, help="only these rules' jobs, forced (a,b)")
    parser.add_argument("--time-rounds", type=int, help="time.runs = time.max_runs (3: issue 48)")
    report_md = "only (b) snakemake --cores 1 <outdir>/report.md into an empty folder against (c)"
    parser.add_argument("--report-md", action="store_true", help=report_md)
    args = parser.parse_args()

    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="mminfer-bench-")).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    machine = f"{platform.machine()}, {args.cores} cores, Python {platform.python_version()}"
    print(f"machine: {machine}; in {workdir}")
    figures = {}
    if args.demo:
        demo_set(workdir, args.cores)
    for name in args.sets.split(","):
        config_file = model_set(workdir, name)
        if config_file is None:
            continue
        if args.time_rounds:
            rounds = {"runs": args.time_rounds, "max_runs": args.time_rounds}
            write_json(config_file, read_json(config_file) | {"time": rounds})
        if args.rules:
            rules = args.rules.split(",")
            figures[name] = rules_only(name, config_file, rules, args.pairs, args.cores)
        elif args.report_md:
            figures[name] = report_md_against_plain(name, config_file, args.pairs, workdir)
        elif args.time_job_against:
            before = Path(args.time_job_against)
            figures[name] = time_job_against(before, name, config_file, args.pairs, args.cores)
        elif name == "minimind-3-moe":
            figures[name] = jobs_only(name, config_file, args.cores)
        else:
            figures[name] = against_plain(name, config_file, args.pairs, args.cores, workdir)
    if args.json:
        write_json(args.json, figures)


if __name__ == "__main__":
    main()
