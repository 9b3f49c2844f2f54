"""Snakemake's command line, each run in a process of its own, without paying for its imports
each time.

``python -m snakemake`` spends most of a dry run importing Snakemake (its plugins pull in pandas
and sqlmodel): about 2 of 3 seconds on 2 cores. A server process imports ``snakemake.cli`` once;
every run is a fork of it that takes the run's working directory, umask, environment, argv and
files for stdout and stderr (stdin empty), calls ``snakemake.cli.main()`` as ``python -m
snakemake`` does and exits with its status. Nothing else is imported before the fork (not
mminfer: a run from another checkout imports that checkout's), and the server never runs a
workflow itself, so each run starts from Snakemake's freshly imported modules, as a new process
would.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

SERVER = r"""
import atexit, json, os, sys, traceback
import snakemake.cli

for line in sys.stdin:
    request = json.loads(line)
    child = os.fork()
    if child == 0:
        code = 1
        try:
            if request["env"] is not None:
                os.environ.clear()
                os.environ.update(request["env"])
            os.chdir(request["cwd"])
            os.umask(request["umask"])
            for fd, path, flags in (
                (0, os.devnull, os.O_RDONLY),
                (1, request["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
                (2, request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
            ):
                os.dup2(os.open(path, flags, 0o600), fd)
            sys.stdin = open(os.devnull)
            sys.path[0] = request["cwd"]  # as python -m puts the working directory first
            sys.argv = [sys.executable + " -m snakemake", *request["args"]]
            try:
                snakemake.cli.main()
                code = 0
            except SystemExit as end:
                code = end.code if isinstance(end.code, int) else (0 if end.code is None else 1)
            except BaseException:
                traceback.print_exc()
            atexit._run_exitfuncs()
        finally:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(code)
    print(json.dumps({"pid": child}), flush=True)
    _, status = os.waitpid(child, 0)
    print(json.dumps({"returncode": os.waitstatus_to_exitcode(status)}), flush=True)
"""


class SnakemakeRunner:
    """``run(args, cwd, umask, timeout, env)``: what ``subprocess.run([python, -m, snakemake,
    *args], capture_output=True, text=True, ...)`` returns, from a fork of one server process."""

    def __init__(self) -> None:
        self.server = subprocess.Popen(
            [sys.executable, "-c", SERVER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def _reply(self, timeout: float | None) -> dict:
        ready, _, _ = select.select([self.server.stdout], [], [], timeout)
        if not ready:
            raise subprocess.TimeoutExpired("snakemake", timeout)
        line = self.server.stdout.readline()
        if not line:
            raise RuntimeError(f"the snakemake server ended (exit {self.server.poll()})")
        return json.loads(line)

    def run(
        self, args: list[str], cwd: Path, umask: int, timeout: float, env: dict | None = None
    ) -> subprocess.CompletedProcess:
        with tempfile.TemporaryDirectory(prefix="snakemake-run-") as folder:
            out, err = Path(folder) / "stdout", Path(folder) / "stderr"
            request = {
                "args": list(args),
                "cwd": str(cwd),
                "umask": umask,
                "env": env,
                "stdout": str(out),
                "stderr": str(err),
            }
            self.server.stdin.write(json.dumps(request) + "\n")
            self.server.stdin.flush()
            pid = self._reply(30)["pid"]
            try:
                returncode = self._reply(timeout)["returncode"]
            except subprocess.TimeoutExpired:
                os.kill(pid, signal.SIGKILL)  # as subprocess.run kills its child
                self._reply(30)
                raise
            command = [sys.executable, "-m", "snakemake", *args]
            return subprocess.CompletedProcess(
                command,
                returncode,
                out.read_text(encoding="utf-8", errors="replace"),
                err.read_text(encoding="utf-8", errors="replace"),
            )

    def close(self) -> None:
        self.server.stdin.close()
        self.server.wait(timeout=30)


_RUNNER: SnakemakeRunner | None = None


def run_snakemake(
    args: list[str],
    cwd: Path,
    umask: int | None = None,
    timeout: float = 600,
    env: dict | None = None,
) -> subprocess.CompletedProcess:
    """``python -m snakemake *args`` in ``cwd`` under ``umask`` (None: this process's) in ``env``
    (None: this process's environment), its output captured, through the one server of this test
    session (started on the first call)."""
    global _RUNNER
    if umask is None:
        umask = os.umask(0o022)
        os.umask(umask)
    if _RUNNER is None or _RUNNER.server.poll() is not None:
        _RUNNER = SnakemakeRunner()
    return _RUNNER.run(args, cwd, umask, timeout, env)
