"""One run per results folder, from any checkout.

Snakemake's own lock lives in the working directory; this one is an exclusive ``flock`` on
``<outdir>/.mminfer.lock``, dropped by the OS when the process ends. Imports nothing heavy.
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

_HELD: dict[str, int] = {}  # resolved folder -> the open descriptor whose lock this process holds


def holder_text(path: Path) -> str:
    """Who holds the lock, from the line the holder wrote into the lock file."""
    try:
        holder = json.loads(path.read_text(encoding="utf-8"))
        return (
            f"the run started at {holder['started']} by pid {holder['pid']} on host "
            f"{holder['host']} from {holder['cwd']}"
        )
    except (OSError, ValueError, KeyError, TypeError):
        return "another run (it has not written who it is yet)"


def hold_results_folder(folder: str | Path) -> bool:
    """Lock ``folder`` for this process's life.

    Returns True when held, False (with a warning) where the file system cannot lock.
    """
    folder = Path(folder)
    path = folder / LOCK_NAME
    real = os.path.realpath(folder)
    if real in _HELD:
        return True
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o666)
    except OSError as exc:
        raise MminferError(
            f"results folder {folder} (config key 'outdir') cannot be written: {exc.strerror} "
            f"({exc.filename}). Choose a folder you can write to."
        ) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            raise MminferError(
                f"results folder {folder} (config key 'outdir') is in use by {holder_text(path)}; "
                f"wait for it to finish, or if that process is gone remove {path}."
            ) from None
        logging.getLogger("mminfer").warning(
            "results folder %s cannot be locked on this file system (%s); "
            "make sure no other run writes into it.",
            folder,
            exc.strerror,
        )
        return False
    holder = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "cwd": os.getcwd(),
        "started": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
    }
    os.ftruncate(fd, 0)
    os.pwrite(fd, (json.dumps(holder) + "\n").encode("utf-8"), 0)
    _HELD[real] = fd
    return True


def release_results_folder(folder: str | Path) -> None:
    """Give the lock back early.

    The file stays: removing it could let two runs lock two different files.
    """
    fd = _HELD.pop(os.path.realpath(folder), None)
    if fd is not None:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
