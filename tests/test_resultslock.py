"""The results-folder lock (mminfer.workflow.resultslock): a second process is refused with the
holder's pid, host and folder; the lock of a process that ended, however it ended, blocks nobody."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from mminfer.errors import MminferError
from mminfer.workflow.resultslock import LOCK_NAME, hold_results_folder, release_results_folder

REPO = Path(__file__).resolve().parents[1]
HOLDER = (
    "import sys; "
    "from mminfer.workflow.resultslock import hold_results_folder; "
    "hold_results_folder(sys.argv[1]); "
    "print('held', flush=True); sys.stdin.read()"
)


def start_holder(folder: Path, cwd: Path) -> subprocess.Popen:
    """Another process that takes the lock on ``folder`` and keeps it until its stdin closes."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(folder)],
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert holder.stdout.readline().strip() == "held"
    return holder


@pytest.fixture
def results(tmp_path):
    folder = tmp_path / "결과 폴더"
    yield folder
    release_results_folder(folder)


def test_second_process_is_refused_with_who_holds_the_folder(results, tmp_path):
    holder = start_holder(results, tmp_path)
    try:
        with pytest.raises(MminferError) as info:
            hold_results_folder(results)
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    message = str(info.value)
    assert f"results folder {results} (config key 'outdir') is in use by the run started" in message
    assert f"by pid {holder.pid} on host {socket.gethostname()} from {tmp_path}" in message
    assert f"remove {results / LOCK_NAME}" in message


@pytest.mark.parametrize("killed", [False, True])
def test_lock_is_free_again_when_the_holder_ends_however_it_ends(results, tmp_path, killed):
    holder = start_holder(results, tmp_path)
    if killed:
        holder.send_signal(signal.SIGKILL)
    else:
        holder.stdin.close()
    holder.wait(timeout=30)
    assert (results / LOCK_NAME).exists()  # the file stays; it blocks nobody
    assert hold_results_folder(results)
    assert json.loads((results / LOCK_NAME).read_text(encoding="utf-8"))["pid"] == os.getpid()


def test_a_lock_held_again_or_released_in_the_same_process_is_fine(results, tmp_path):
    assert hold_results_folder(results)
    assert hold_results_folder(results)
    release_results_folder(results)
    holder = start_holder(results, tmp_path)  # another process may take it
    holder.stdin.close()
    holder.wait(timeout=30)
    assert holder.returncode == 0


def test_folder_that_cannot_be_created_is_an_error_naming_outdir(tmp_path):
    (tmp_path / "file").write_text("not a folder", encoding="utf-8")
    with pytest.raises(
        MminferError, match="results folder .* \\(config key 'outdir'\\) cannot be written"
    ):
        hold_results_folder(tmp_path / "file" / "out")
