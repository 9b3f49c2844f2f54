"""One run at a time per results folder, whichever checkout or copy of the workflow it comes from.

Snakemake's own lock lives in the working directory (``.snakemake/locks``), so two clones writing the
same ``outdir`` never see each other. The workflow's ``onstart`` handler (a real run's main process
only: not a dry run, not ``--lint``/``--dag``/``--summary``, not a job's subprocess, which runs with
``--no-hooks``) calls :func:`hold_results_folder`: an exclusive ``flock`` on ``<outdir>/.mminfer.lock``,
kept until the process ends. The operating system drops it when the process exits or is killed, so a
lock file left behind never blocks a later run. The file holds who took the lock, for the message of a
refused run.

Imports nothing heavy: the workflow calls this while it parses.
"""

from __future__ import annotations

import datetime
import errno
import fcntl
import json
import logging
import os
import socket
from pathlib import Path

from mminfer.errors import MminferError

LOCK_NAME = ".mminfer.lock"

# Folders this process holds: resolved path -> open file descriptor (the lock lives as long as it).
_HELD: dict[str, int] = {}


def lock_path(folder: str | Path) -> Path:
    return Path(folder) / LOCK_NAME


def holder_text(path: Path) -> str:
    """'the run started at T by pid N on host H from /dir', from the lock file's line."""
    try:
        holder = json.loads(path.read_text(encoding="utf-8"))
        return (f"the run started at {holder['started']} by pid {holder['pid']} on host {holder['host']} "
                f"from {holder['cwd']}")
    except (OSError, ValueError, KeyError, TypeError):
        return "another run (it has not written who it is yet)"


def hold_results_folder(folder: str | Path, key: str = "outdir") -> bool:
    """Lock ``folder`` for the rest of this process's life. True when held (or already held by this
    process); False, with a warning, where the file system cannot lock. Another holder is an
    MminferError saying which run it is."""
    folder = Path(folder)
    path = lock_path(folder)
    real = os.path.realpath(folder)
    if real in _HELD:
        return True
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o666)
    except OSError as exc:
        raise MminferError(f"results folder {folder} (config key '{key}') cannot be written: {exc.strerror} "
                           f"({exc.filename}). Choose a folder you can write to.") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            raise MminferError(
                f"results folder {folder} (config key '{key}') is in use by {holder_text(path)}; wait for it "
                f"to finish, or if that process is gone remove {path}."
            ) from None
        logging.getLogger("mminfer").warning("results folder %s cannot be locked on this file system (%s); "
                                             "make sure no other run writes into it.", folder, exc.strerror)
        return False
    holder = {"pid": os.getpid(), "host": socket.gethostname(), "cwd": os.getcwd(),
              "started": datetime.datetime.now().astimezone().isoformat(timespec="seconds")}
    os.ftruncate(fd, 0)
    os.pwrite(fd, (json.dumps(holder) + "\n").encode("utf-8"), 0)
    _HELD[real] = fd
    return True


def release_results_folder(folder: str | Path) -> None:
    """Give the lock back before the process ends (the file stays: removing it could let two runs lock
    two different files)."""
    fd = _HELD.pop(os.path.realpath(folder), None)
    if fd is not None:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
