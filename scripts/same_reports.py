"""Check that a refactor preserves the reports: every case rendered whole, here and at a commit.

Renders both reports of every case of tests/reportcases.py (not only the sections the golden files
pin) and every picture's titles (each axis's title, the figure's and each legend's) with the
working tree's code and with the code of COMMIT (a temporary git worktree), and compares the
texts. The cases are the working tree's (its tests/ folder) on both sides, so a case added by the
change renders at COMMIT too (``--cases-of-commit`` renders each side's own cases). Exit 0 where
every text is identical; otherwise each differing case and text is named, with its first
differing line (``--show`` prints both lines), and the exit is 1.

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

from mminfer.report.check import first_difference

REPO = Path(__file__).resolve().parents[1]
# Run inside a tree: every case's reports and picture titles, as JSON on stdout.
RENDER = """
import json, sys, tempfile
import matplotlib
matplotlib.use("Agg")
import reportcases
from mminfer import measurements
try:  # the pictures' floor: plots.py before issue 66's split, drawing.py after it
    from mminfer.report import plots as drawing
except ImportError:
    from mminfer.report import drawing

titles = []

def captured(fig, out_png):
    for ax in fig.axes:
        titles.append(ax.get_title())
        legend = ax.get_legend()
        if legend is not None and legend.get_title().get_text():
            titles.append("legend: " + legend.get_title().get_text())
    if fig._suptitle is not None:
        titles.append("figure: " + fig._suptitle.get_text())
    drawing.plt.close(fig)
    return out_png

drawing.save_figure = captured
found = {}
for name in sorted(reportcases.cases()):
    texts = dict(reportcases.reports(name))
    records = reportcases.cases()[name]["records"]
    for entry in measurements.MEASUREMENTS:
        for picture in entry.pictures:
            if records.get(entry.name) is None:
                continue
            module, function = picture.draw.split(":")
            draw = getattr(sys.modules.get(module) or __import__(module, fromlist=[function]),
                           function)
            titles.clear()
            draw(records[entry.name], tempfile.gettempdir() + "/same_reports.png")
            texts[picture.name + ".png"] = "\\n".join(titles) + "\\n"
    found[name] = texts
json.dump(found, sys.stdout, ensure_ascii=False)
"""


def rendered(tree: Path, cases: Path) -> dict[str, dict[str, str]]:
    """Every case's reports and picture titles, the cases of ``cases`` (a tests/ folder) rendered
    by the code of ``tree``."""
    env = {**os.environ, "PYTHONPATH": f"{tree}{os.pathsep}{cases}"}
    ran = subprocess.run(
        [sys.executable, "-c", RENDER], cwd=tree, env=env, capture_output=True, text=True
    )
    if ran.returncode != 0:
        raise SystemExit(f"rendering the cases in {tree} failed:\n{ran.stderr[-2000:]}")
    return json.loads(ran.stdout)


def differences(before: dict, after: dict, show: bool = False) -> list[str]:
    """One line per case and text whose text differs (or is missing on one side); with ``show``,
    the first differing line of each side after it."""
    found = []
    for case in sorted(set(before) | set(after)):
        old, new = before.get(case, {}), after.get(case, {})
        for report in sorted(set(old) | set(new)):
            if old.get(report) == new.get(report):
                continue
            number, was, now = first_difference(old.get(report) or "", new.get(report) or "")
            found.append(f"{case} {report}: first difference at line {number}")
            if show:
                found.append(f"  - {was or '(none)'}")
                found.append(f"  + {now or '(none)'}")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("commit", help="the commit whose rendering the working tree must equal")
    parser.add_argument("--show", action="store_true", help="print each first differing line")
    parser.add_argument(
        "--cases-of-commit",
        action="store_true",
        help="render the commit's own tests/reportcases.py at the commit (not the working tree's)",
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        tree = Path(folder) / "tree"
        add = ["git", "-C", str(REPO), "worktree", "add", "--detach", str(tree), args.commit]
        subprocess.run(add, check=True, capture_output=True)
        try:
            before = rendered(tree, tree / "tests" if args.cases_of_commit else REPO / "tests")
        finally:
            remove = ["git", "-C", str(REPO), "worktree", "remove", "--force", str(tree)]
            subprocess.run(remove, check=True, capture_output=True)
    after = rendered(REPO, REPO / "tests")
    found = differences(before, after, args.show)
    for line in found:
        print(line)
    texts = sum(len(reports) for reports in after.values())
    differing = sum(1 for line in found if not line.startswith("  "))
    print(f"{len(after)} cases, {texts} texts (reports and picture titles): {differing} differ")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
