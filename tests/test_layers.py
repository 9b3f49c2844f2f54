"""The package's layers hold (.importlinter, checked by import-linter): measurements are siblings,
the floor lies below them, the model and its loading below the floor, and the readers (records,
registry, report, pictures, comparison) import neither torch nor the measuring code.

A planted import of one measurement module into another, in a copy of the package, breaks them.
"""

from __future__ import annotations

import configparser
import importlib
import inspect
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mminfer.measurements import MEASUREMENTS

REPO = Path(__file__).resolve().parents[1]


def lint_imports(root: Path) -> subprocess.CompletedProcess:
    """lint-imports over the package under ``root``, with the contracts of ``root``."""
    command = Path(sys.executable).with_name("lint-imports")
    if not command.exists():
        found = shutil.which("lint-imports")
        if found is None:
            pytest.skip("import-linter is not installed (pip install -e '.[test]')")
        command = Path(found)
    env = {
        **os.environ,
        "PYTHONPATH": str(root),
        "COLUMNS": "200",  # one line per contract in the report
    }
    return subprocess.run(
        [str(command), "--no-cache", "--no-logo", str(root / ".importlinter")],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def copy_of_package(tmp_path: Path) -> Path:
    """The package and its contracts, copied under ``tmp_path`` (no caches)."""
    shutil.copytree(
        REPO / "mminfer",
        tmp_path / "mminfer",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
    )
    shutil.copy(REPO / ".importlinter", tmp_path / ".importlinter")
    return tmp_path


def test_the_layer_contracts_hold():
    result = lint_imports(REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 kept, 0 broken" in result.stdout


def test_a_measurement_importing_another_breaks_the_contracts(tmp_path):
    root = copy_of_package(tmp_path)
    conversation = root / "mminfer" / "conversation.py"
    text = conversation.read_text(encoding="utf-8")
    planted = "from mminfer.serve import ServeSettings  # planted\n"
    anchor = "from mminfer.tokenizer import Tokenizer\n"
    assert anchor in text
    conversation.write_text(text.replace(anchor, anchor + planted), encoding="utf-8")
    result = lint_imports(root)
    assert result.returncode != 0
    assert "Measurements are siblings: no measurement module imports another BROKEN" in (
        result.stdout
    )
    assert "mminfer.conversation -> mminfer.serve" in result.stdout


def test_the_contracts_name_every_measurement_module_of_the_registry():
    contracts = configparser.ConfigParser()
    contracts.read(REPO / ".importlinter", encoding="utf-8")
    declared = {entry.measured_by.split(":")[0] for entry in MEASUREMENTS}
    siblings = set(contracts["importlinter:contract:siblings"]["modules"].split())
    layers = contracts["importlinter:contract:floor"]["layers"].strip().splitlines()  # top first
    top = {f"mminfer.{name.strip()}" for name in layers[0].split("|")}
    assert siblings == declared, "run python scripts/config_docs.py"
    assert top == declared, "run python scripts/config_docs.py"


FLOOR = [
    "abtiming",
    "cachebytes",
    "clock",
    "counting",
    "draws",
    "fit",
    "generation",
    "machine",
    "spread",
]


def positional(function) -> list[str]:
    """The parameters of ``function`` that a caller may pass by position."""
    parameters = inspect.signature(function).parameters.values()
    return [parameter.name for parameter in parameters if parameter.kind != parameter.KEYWORD_ONLY]


def test_every_measuring_function_takes_keyword_only_arguments():
    for entry in MEASUREMENTS:
        module, name = entry.measured_by.split(":")
        function = getattr(importlib.import_module(module), name)
        assert positional(function) == [], entry.measured_by


def test_the_floors_functions_of_more_than_three_arguments_take_them_by_keyword():
    for module_name in FLOOR:
        module = importlib.import_module(f"mminfer.{module_name}")
        for name, function in vars(module).items():
            if not inspect.isfunction(function) or function.__module__ != module.__name__:
                continue
            if len(inspect.signature(function).parameters) > 3:
                assert positional(function) == [], f"mminfer.{module_name}.{name}"
