"""Plain style, checked in the test run: ruff's format and lint (line length 100, pyproject.toml)
over mminfer/, scripts/ and tests/, snakefmt over the rules, and no line past 100 characters in the
rules either; no function of mminfer/ or scripts/ takes more than 8 parameters."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PYTHON = ["mminfer", "scripts", "tests"]
RULES = [
    "Snakefile",
    *sorted(str(path.relative_to(REPO)) for path in (REPO / "rules").glob("*.smk")),
]


def tool(name: str) -> str:
    """The tool beside this Python (the test extras install it), else on PATH."""
    beside = Path(sys.executable).with_name(name)
    if beside.exists():
        return str(beside)
    found = shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed (pip install -e '.[test]')")
    return found


def run(*command: str) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=False)


def test_python_is_formatted_by_ruff():
    result = run(tool("ruff"), "format", "--check", *PYTHON)
    assert result.returncode == 0, result.stdout + result.stderr


def test_python_passes_ruffs_lint():
    result = run(tool("ruff"), "check", *PYTHON)
    assert result.returncode == 0, result.stdout + result.stderr


def test_rules_are_formatted_by_snakefmt():
    result = run(tool("snakefmt"), "--check", *RULES)
    assert result.returncode == 0, result.stdout + result.stderr


def test_no_line_of_the_rules_runs_past_100_characters():
    long = []
    for name in RULES:
        for number, line in enumerate((REPO / name).read_text(encoding="utf-8").splitlines(), 1):
            if len(line) > 100:
                long.append(f"{name}:{number}")
    assert long == []


def test_no_line_of_the_report_templates_runs_past_100_characters():
    """report/, the report's pages and sections and each measures folder (captions) hold prose:
    Markdown joins a paragraph's wrapped lines (mminfer.report.render.unwrap)."""
    long = []
    prose = [REPO / "report", REPO / "mminfer/report", REPO / "mminfer/measures"]
    for path in sorted(path for folder in prose for path in folder.glob("**/*")):
        if path.suffix not in (".j2", ".rst"):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if len(line) > 100:
                long.append(f"{path.relative_to(REPO)}:{number}")
    assert long == []


MOST_PARAMETERS = 8
# MiniMind's own signatures, which the twin must match (mminfer/model/twin.py).
MINIMIND_SIGNATURES = {("mminfer/model/twin.py", "generate"), ("mminfer/model/twin.py", "forward")}


def parameters_of(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """Every parameter's name (keyword-only, *args and **kwargs too), self and cls aside."""
    arguments = function.args
    names = [arg.arg for arg in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]]
    for extra in (arguments.vararg, arguments.kwarg):
        if extra is not None:
            names.append(extra.arg)
    return [name for name in names if name not in ("self", "cls")]


def test_no_function_takes_more_than_eight_parameters():
    """What belongs together travels as one record (a settings record, Draws, Rounds, Prompted)."""
    crowded = []
    for folder in ("mminfer", "scripts"):
        for path in sorted((REPO / folder).rglob("*.py")):
            where = str(path.relative_to(REPO))
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                if (where, node.name) in MINIMIND_SIGNATURES:
                    continue
                count = len(parameters_of(node))
                if count > MOST_PARAMETERS:
                    crowded.append(f"{where}:{node.lineno} {node.name} ({count})")
    assert crowded == []
