"""Check that a refactor preserves the reports: every case rendered whole, here and at a commit.

Renders both reports of every case of tests/reportcases.py (not only the sections the golden files
pin) with the working tree's code and with the code of COMMIT (a temporary git worktree), and
compares the texts. Exit 0 where every text is identical; otherwise each differing case and report
is named, with its first differing line, and the exit is 1.

    python scripts/same_reports.py 49095c6
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# Run inside a tree: every case's reports, as JSON on stdout.
RENDER = (
    "import json, sys, reportcases\n"
    "json.dump({name: reportcases.reports(name) for name in sorted(reportcases.cases())},"
    " sys.stdout, ensure_ascii=False)"
)


def rendered(tree: Path) -> dict[str, dict[str, str]]:
    """Every case's reports, rendered by the code of ``tree``."""
    env = {**os.environ, "PYTHONPATH": f"{tree}{os.pathsep}{tree / 'tests'}"}
    ran = subprocess.run(
        [sys.executable, "-c", RENDER], cwd=tree, env=env, capture_output=True, text=True
    )
    if ran.returncode != 0:
        raise SystemExit(f"rendering the cases in {tree} failed:\n{ran.stderr[-2000:]}")
    return json.loads(ran.stdout)


def differences(before: dict, after: dict) -> list[str]:
    """One line per case and report whose text differs (or is missing on one side)."""
    found = []
    for case in sorted(set(before) | set(after)):
        old, new = before.get(case, {}), after.get(case, {})
        for report in sorted(set(old) | set(new)):
            if old.get(report) == new.get(report):
                continue
            old_lines = (old.get(report) or "").splitlines()
            new_lines = (new.get(report) or "").splitlines()
            first = next(
                (i for i, pair in enumerate(zip(old_lines, new_lines)) if pair[0] != pair[1]),
                min(len(old_lines), len(new_lines)),
            )
            found.append(f"{case} {report}: first difference at line {first + 1}")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("commit", help="the commit whose rendering the working tree must equal")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        tree = Path(folder) / "tree"
        add = ["git", "-C", str(REPO), "worktree", "add", "--detach", str(tree), args.commit]
        subprocess.run(add, check=True, capture_output=True)
        try:
            before = rendered(tree)
        finally:
            remove = ["git", "-C", str(REPO), "worktree", "remove", "--force", str(tree)]
            subprocess.run(remove, check=True, capture_output=True)
    after = rendered(REPO)
    found = differences(before, after)
    for line in found:
        print(line)
    texts = sum(len(reports) for reports in after.values())
    print(f"{len(after)} cases, {texts} reports: {len(found)} differ from {args.commit}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
