"""The package's layers hold as its folders show them (.importlinter, checked by import-linter):
a measures folder never imports another, a report section never imports another, the report lies
above the registry, the registry above
the measures, the measures above timing and the model; records, the registry and the report never
import torch, the model or the timing.

Planted imports in a copy of the package break them.
"""

from __future__ import annotations

import importlib
import inspect
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mminfer.measurements import MEASUREMENTS, declared

REPO = Path(__file__).resolve().parents[1]


def lint_imports(root: Path) -> subprocess.CompletedProcess:
    """lint-imports over the package under ``root``, with the contracts of ``root``."""
    command = Path(sys.executable).with_name("lint-imports")
    if not command.exists():
        found = shutil.which("lint-imports")
        if found is None:
            pytest.skip("import-linter is not installed (pip install -e '.[test]')")
        command = Path(found)
    env = {**os.environ, "PYTHONPATH": str(root), "COLUMNS": "200"}  # a line per contract
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
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(REPO / "mminfer", tmp_path / "mminfer", ignore=ignore)
    shutil.copy(REPO / ".importlinter", tmp_path / ".importlinter")
    return tmp_path


def test_the_layer_contracts_hold():
    result = lint_imports(REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "5 kept, 0 broken" in result.stdout


ANCHOR = "from __future__ import annotations\n"  # every module's first import


def planted(root: Path, module: str, line: str) -> None:
    """``line`` planted after ``module``'s ANCHOR (a path under root/mminfer)."""
    path = root / "mminfer" / module
    text = path.read_text(encoding="utf-8")
    assert ANCHOR in text, module
    path.write_text(text.replace(ANCHOR, ANCHOR + line + "  # planted\n", 1), encoding="utf-8")


@pytest.mark.parametrize(
    "module, line, broken",
    [
        (  # one measures folder into another
            "measures/conversation/measure.py",
            "from mminfer.measures.serve.measure import ServeSettings",
            "A measures folder never imports another BROKEN",
        ),
        (  # one report section into another
            "report/sections/serve/serve.py",
            "from mminfer.report.sections.sweep.sweep import sweep_time_facts",
            "A report section never imports another BROKEN",
        ),
        (  # a section above the rendering that includes it
            "report/sections/batch/batch.py",
            "from mminfer.report.render import table_row",
            "the rendering above the sections, the sections above the report's floor BROKEN",
        ),
        (
            "model/generation.py",
            "from mminfer.measures.cache.same import Same",
            "the measures above timing and the model BROKEN",
        ),
        (
            "measures/kvbytes/kvbytes.py",
            "import torch",
            "never import torch, the model or the timing BROKEN",
        ),
    ],
)
def test_a_planted_import_breaks_the_contracts(tmp_path, module, line, broken):
    root = copy_of_package(tmp_path)
    planted(root, module, line)
    result = lint_imports(root)
    assert result.returncode != 0 and broken in result.stdout
    if "serve" in line:
        said = "mminfer.measures.conversation.measure -> mminfer.measures.serve.measure"
        assert said in result.stdout


def test_each_measurement_lives_in_its_rules_folder_and_is_said_in_its_section_s():
    """Its measuring function and its record in mminfer/measures/<rule>/; its facts, sentences
    and template in mminfer/report/sections/<section>/."""
    for entry in MEASUREMENTS:
        folder = f"mminfer.measures.{entry.rule}."
        assert entry.measured_by.startswith(folder), entry.measured_by
        assert declared(entry.record)[0].startswith(folder), entry.name
        if entry.template is not None:
            assert entry.template.startswith(f"{entry.section_folder}/"), entry.template
            assert entry.facts.startswith(f"mminfer.report.sections.{entry.section_folder}.")


FLOOR = ["timing.ab", "timing.clock", "timing.fit", "timing.machine", "records.spread"]
FLOOR += ["model.cachebytes", "model.counting", "model.draws", "model.generation"]


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
