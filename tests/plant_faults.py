"""Plant each fault of tests/faults.yaml in a copy of a tree and run the tests that must catch it.

    python tests/plant_faults.py --tree PATH [--faults FILE] [--only NAME ...] [--list] [--check]
                                 [--skip-absent] [--whole-suite]

The tree is copied once into a temporary folder (without .git, __pycache__, results, .snakemake);
for each fault the one file holding its ``find`` has ``find`` replaced by ``replace``, its
``tests`` run as ``python -m pytest -q -x -p no:cacheprovider <tests>`` in the copy (PYTHONPATH
the copy), and the file is put back. A fault is "caught" when pytest fails a test (exit 1),
"missed" when the tests pass (exit 0), "error" otherwise (a collection or usage error: the fault
broke more than the tests look at; reported apart, not counted as caught), "unappliable" when its
``find`` is not exactly once in the searched folders. The table is printed; the exit status is 1
when any fault is not caught. ``--check`` only checks that every ``find`` is there exactly once.

An older tree (77d9d50, before the folder redesign) wrote some code another way: a fault's
``find`` may list one string per way (each tree holds exactly one), and its ``tests`` may name
tests that only one tree has: those the tree lacks are left out (none left: "error").
A fault none of whose finds is anywhere in the tree is "absent" (code the tree does not have, such
as issue 47's intervals on 77d9d50); ``--skip-absent`` does not count it against the exit status.
``--whole-suite`` runs the tree's whole suite but its slow end-to-end runs (``-m "not slow"``,
about a minute on 2 cores) for each fault instead of its tests: whether any test of the tree
catches it.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

SEARCHED = ("mminfer", "report", "scripts", "rules")  # the folders a fault's find is looked for in
FIELDS = ("name", "kind", "measurement", "find", "replace", "tests")
IGNORED = shutil.ignore_patterns(
    ".git", "__pycache__", "results", ".snakemake", ".hypothesis", "*.pyc", ".venv"
)
# A pytest plugin for the planted runs: Hypothesis finds a failing example and stops there, as
# the suite's own planted-error tests do (FIND in tests/test_claims_timing.py): shrinking one
# takes minutes and says nothing more about whether the fault was caught.
PLUGIN = "plant_faults_no_shrink"
PLUGIN_SOURCE = """\
from hypothesis import Phase, settings

settings.register_profile("planted", phases=[Phase.explicit, Phase.reuse, Phase.generate])
settings.load_profile("planted")
"""
DEFAULT_FAULTS = Path(__file__).resolve().parent.parent / "tests" / "faults.yaml"


@dataclass
class Outcome:
    name: str
    measurement: str
    kind: str
    result: str  # caught, missed, error, unappliable, absent
    seconds: float
    detail: str = ""


def load_faults(path: Path) -> list[dict]:
    faults = yaml.safe_load(path.read_text(encoding="utf-8"))["faults"]
    for fault in faults:
        missing = [field for field in FIELDS if field not in fault]
        if missing:
            raise SystemExit(f"{path}: fault {fault.get('name')!r} lacks {', '.join(missing)}")
    return faults


def searched_files(tree: Path) -> list[Path]:
    files = []
    for folder in SEARCHED:
        for path in sorted((tree / folder).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                files.append(path)
    return files


def occurrences(tree: Path, find: str) -> list[tuple[Path, int]]:
    """Each searched file holding ``find`` and how many times."""
    found = []
    for path in searched_files(tree):
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        count = text.count(find)
        if count:
            found.append((path, count))
    return found


def pairs(fault: dict) -> list[tuple[str, str]]:
    """The fault's (find, replace) pairs: one, or a list of them where the code it plants in was
    written another way in another tree (each tree holds exactly one of them)."""
    finds, replaces = fault["find"], fault["replace"]
    if isinstance(finds, str):
        return [(finds, replaces)]
    return list(zip(finds, replaces))


class Absent(ValueError):
    """None of the fault's finds is anywhere in the tree: code the tree does not have."""


def located(tree: Path, fault: dict) -> tuple[Path, str, str]:
    """The one file holding one of the fault's finds once, that find and its replacement; raises
    Absent where no find is there at all, ValueError where one is there more than once or more
    than one is there once."""
    seen = []
    for find, replace in pairs(fault):
        found = occurrences(tree, find)
        total = sum(count for _, count in found)
        if total == 1:
            seen.append((found[0][0], find, replace))
        elif total > 1:
            places = ", ".join(f"{path.relative_to(tree)} x{count}" for path, count in found)
            raise ValueError(f"find occurs {total} times ({places})")
    if not seen:
        raise Absent("none of its finds is in this tree")
    if len(seen) > 1:
        raise ValueError(f"{len(seen)} of its finds occur once (one must)")
    return seen[0]


def test_args(fault: dict) -> list[str]:
    tests = fault["tests"]
    return shlex.split(tests) if isinstance(tests, str) else list(tests)


def present(tree: Path, test: str) -> bool:
    """Whether the tree has the test file, and the test function where one is named (a pytest
    option such as ``-k top_p`` is kept as it is)."""
    if not test.startswith("tests/"):
        return True
    file, _, name = test.partition("::")
    path = tree / file
    if not path.is_file():
        return False
    function = name.split("[")[0].split("::")[-1]
    return not function or f"def {function}(" in path.read_text(encoding="utf-8")


def plant(copy: Path, plugins: Path, fault: dict, whole_suite: bool = False) -> Outcome:
    started = time.monotonic()

    def outcome(result: str, detail: str = "") -> Outcome:
        seconds = time.monotonic() - started
        return Outcome(fault["name"], fault["measurement"], fault["kind"], result, seconds, detail)

    try:
        path, find, replace = located(copy, fault)
    except Absent as error:
        return outcome("absent", str(error))
    except ValueError as error:
        return outcome("unappliable", str(error))
    if whole_suite:
        tests = ["-m", "not slow"]
    else:
        tests = [test for test in test_args(fault) if present(copy, test)]
    if not tests:
        return outcome("error", "none of its tests is in this tree")
    original = path.read_text(encoding="utf-8")
    path.write_text(original.replace(find, replace), encoding="utf-8")
    try:
        command = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider"]
        # pytest-benchmark, where installed, owns the fixture `benchmark` 77d9d50's tests define
        command += ["-p", PLUGIN, "-p", "no:benchmark"]
        search = os.pathsep.join([str(copy), str(plugins)])
        env = os.environ | {"PYTHONPATH": search, "PYTHONDONTWRITEBYTECODE": "1"}
        done = subprocess.run(command + tests, cwd=copy, env=env, capture_output=True, text=True)
    finally:
        path.write_text(original, encoding="utf-8")
    lines = (done.stdout + done.stderr).strip().splitlines()
    last = lines[-1] if lines else ""
    if done.returncode == 1:
        return outcome("caught", last)
    if done.returncode == 0:
        return outcome("missed", last)
    return outcome("error", f"pytest exit {done.returncode}: {last}")


def table(outcomes: list[Outcome]) -> str:
    rows = [("fault", "measurement", "kind", "result", "s", "pytest")]
    for o in outcomes:
        rows.append((o.name, o.measurement, o.kind, o.result, f"{o.seconds:.1f}", o.detail[:70]))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    lines = []
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row, widths)] + [row[-1]]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, default=Path.cwd(), help="the tree to plant in")
    parser.add_argument("--faults", type=Path, default=DEFAULT_FAULTS, help="the list of faults")
    parser.add_argument("--only", action="append", default=[], help="this fault only (repeatable)")
    parser.add_argument("--list", action="store_true", help="list the faults and stop")
    parser.add_argument("--check", action="store_true", help="only check each find is there once")
    parser.add_argument(
        "--skip-absent", action="store_true", help="leave out faults in code the tree lacks"
    )
    parser.add_argument(
        "--whole-suite", action="store_true", help="run the suite but its slow tests per fault"
    )
    args = parser.parse_args(argv)

    faults = load_faults(args.faults)
    if args.only:
        unknown = set(args.only) - {fault["name"] for fault in faults}
        if unknown:
            raise SystemExit(f"no such fault: {', '.join(sorted(unknown))}")
        faults = [fault for fault in faults if fault["name"] in args.only]
    if args.list:
        for fault in faults:
            print(f"{fault['name']:<40} {fault['measurement']:<14} {fault['kind']}")
        return 0
    tree = args.tree.resolve()
    counted = {"caught", "absent"} if args.skip_absent else {"caught"}
    if args.check:
        bad = absent = 0
        for fault in faults:
            try:
                located(tree, fault)
            except Absent as error:
                absent += 1
                print(f"{fault['name']}: {error}")
            except ValueError as error:
                bad += 1
                print(f"{fault['name']}: {error}")
        applying = len(faults) - bad - absent
        print(f"{applying} of {len(faults)} faults apply to {tree}; {absent} absent")
        return 1 if bad or (absent and not args.skip_absent) else 0

    started = time.monotonic()
    outcomes = []
    with tempfile.TemporaryDirectory(prefix="planted-") as folder:
        copy = Path(folder) / "tree"
        shutil.copytree(tree, copy, ignore=IGNORED, symlinks=True)
        plugins = Path(folder) / "plugins"
        plugins.mkdir()
        (plugins / f"{PLUGIN}.py").write_text(PLUGIN_SOURCE, encoding="utf-8")
        for fault in faults:
            outcome = plant(copy, plugins, fault, args.whole_suite)
            print(f"{outcome.name}: {outcome.result} ({outcome.seconds:.1f} s)", flush=True)
            outcomes.append(outcome)
    print()
    print(f"tree {tree}")
    print(table(outcomes))
    tally = {}
    for o in outcomes:
        tally[o.result] = tally.get(o.result, 0) + 1
    summary = ", ".join(f"{count} {result}" for result, count in sorted(tally.items()))
    print(f"{len(outcomes)} faults: {summary}; {time.monotonic() - started:.0f} s")
    return 0 if all(o.result in counted for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
