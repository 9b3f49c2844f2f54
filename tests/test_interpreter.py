"""A Python whose path Snakemake's shell would split stops a run before any job, saying why and
the way out (mminfer/workflow/interpreter.py, snakemake/snakemake#2645)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mminfer.workflow.interpreter import interpreter_problem

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("executable", "conda", "stops"),
    [
        ("/home/kim/My Projects/mminfer/.venv/bin/python", False, True),
        ("/home/kim/it's/.venv/bin/python", False, True),
        ("/home/kim/$HOME/.venv/bin/python", False, True),
        ("/home/kim/My Projects/mminfer/.venv/bin/python", True, False),  # the env's python runs
        ("/home/김/프로젝트/.venv/bin/python3.11", False, False),  # Hangul is a word to the shell
        ("/usr/bin/python3", False, False),
    ],
)
def test_only_a_path_the_shell_splits_stops_and_the_message_says_the_way_out(
    executable, conda, stops
):
    problem = interpreter_problem(executable, conda)
    assert (problem is not None) == stops
    if stops:
        assert repr(executable) in problem and "exit status 127" in problem
        assert "python3 -m venv" in problem and "--sdm conda" in problem


@pytest.fixture
def python_under_a_space(tmp_path):
    """This Python reached through a folder whose name holds a space and Hangul: its prefix
    linked there, so that it finds its own packages and says that path as sys.executable."""
    prefix = tmp_path / "내 프로젝트"
    prefix.symlink_to(Path(sys.prefix), target_is_directory=True)
    executable = prefix / "bin" / Path(sys.executable).name
    said = subprocess.run(
        [str(executable), "-c", "import sys, snakemake; print(sys.executable)"],
        capture_output=True,
        text=True,
    )
    if said.returncode != 0 or " " not in said.stdout:
        pytest.skip(f"this Python does not run from a linked prefix: {said.stderr[-300:]}")
    return executable


def test_a_run_from_a_python_whose_path_has_a_space_stops_before_any_job(
    python_under_a_space, tmp_path
):
    outdir = tmp_path / "results"
    command = [str(python_under_a_space), "-m", "snakemake", "--cores", "1"]
    config = ["--config", f"outdir={outdir}", f"demo_dir={tmp_path / 'demo'}"]
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    dry = subprocess.run([*command, "-n", *config], cwd=REPO, env=env, capture_output=True)
    assert dry.returncode == 0
    assert b"snakemake/snakemake#2645" in dry.stderr + dry.stdout
    assert b"A run (without -n) stops here" in dry.stderr + dry.stdout
    run = subprocess.run([*command, *config], cwd=REPO, env=env, capture_output=True)
    assert run.returncode != 0
    assert b"without quoting its path (snakemake/snakemake#2645)" in run.stderr + run.stdout
    assert not outdir.exists() and not (tmp_path / "demo").exists()
