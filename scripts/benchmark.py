"""Benchmark of the embedded demo (not a rule script): the budget figures and the quality bar.

    python scripts/benchmark.py [--workdir DIR] [--cores 2] [--json bench.json]

Runs, in a fresh folder, with the demo forced on:
  1. a cold run of the whole workflow (corpus, tokenizer, pretrain, SFT, all outputs);
  2. a warm rerun of every measurement rule (`-R cache time kvbytes temp topp`), demo files kept;
  3. a no-op run (nothing changed).
Prints each wall time against its budget (5 min, 1 min, 5 s) and the demo's quality checks, and
optionally writes them as JSON. Timings are printed, never asserted: shared machines are noisy.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from mminfer.demo.corpus import GARAM_VILLAGE  # noqa: E402
from mminfer.demo.quality import quality_checks  # noqa: E402

BUDGET_S = {"cold": 300.0, "warm_measurements": 60.0, "noop": 5.0}
MEASUREMENT_RULES = ["cache", "time", "kvbytes", "temp", "topp"]


def run_snakemake(args: list[str], cores: int) -> float:
    command = [sys.executable, "-m", "snakemake", *args, "--cores", str(cores)]
    start = time.perf_counter()
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit(f"snakemake {' '.join(args)} failed:\n{result.stderr[-4000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workdir", default=None, help="folder for results and demo files (default: a temp dir)")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--json", default=None, help="also write the figures to this JSON file")
    args = parser.parse_args()

    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="mminfer-bench-"))
    outdir, demo_dir = workdir / "out", workdir / "demo"
    config = ["--config", f"outdir={outdir}", f"demo_dir={demo_dir}", "demo=always"]

    times = {
        "cold": run_snakemake(config, args.cores),
        "warm_measurements": run_snakemake(["-R", *MEASUREMENT_RULES, *config], args.cores),
        "noop": run_snakemake(config, args.cores),
    }
    facts = json.loads((demo_dir / "corpus" / "facts.json").read_text(encoding="utf-8"))
    checks = quality_checks(outdir, facts[GARAM_VILLAGE])
    timing = json.loads((outdir / "time.json").read_text(encoding="utf-8"))

    print(f"machine: {platform.machine()}, {args.cores} cores, Python {platform.python_version()}")
    for name, seconds in times.items():
        verdict = "within" if seconds <= BUDGET_S[name] else "OVER"
        print(f"{name:18s} {seconds:8.1f} s  (budget {BUDGET_S[name]:.0f} s: {verdict})")
    print(f"speedup {timing['speedup']:.2f} (with cache {timing['with_cache_s']:.3f} s, "
          f"without {timing['without_cache_s']:.3f} s)")
    for name, check in checks.items():
        print(f"{'ok ' if check['ok'] else 'FAIL'} {name}: {check['value']} (bar: {check['bar']})")
    if args.json:
        Path(args.json).write_text(json.dumps({"seconds": times, "budget_s": BUDGET_S, "checks": checks,
                                               "speedup": timing["speedup"]}, ensure_ascii=False, indent=2))
    print(f"results in {outdir}")


if __name__ == "__main__":
    main()
