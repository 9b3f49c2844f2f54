"""Writing results safely: a killed job never leaves a half-written file behind."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
from pathlib import Path

from mminfer.errors import MminferError


def _create_temp_beside(path: Path) -> tuple[int, Path]:
    """A new temporary file beside ``path``, with the mode a plain ``open(path, "w")`` gives.

    That is 0o666 less the umask, or the folder's default ACL, not ``mkstemp``'s 0o600 that others
    could not read.
    """
    flags = (
        os.O_WRONLY
        | os.O_CREAT
        | os.O_EXCL
        | getattr(os, "O_CLOEXEC", 0)
        | getattr(os, "O_BINARY", 0)
    )
    for _ in range(100):
        tmp = path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp"
        with contextlib.suppress(FileExistsError):
            return os.open(tmp, flags, 0o666), tmp
    raise FileExistsError(f"no free temporary name beside {path}")


@contextlib.contextmanager
def atomic_writer(path: str | Path, binary: bool = False):
    """A handle on a temporary file beside ``path`` that replaces ``path`` when the block succeeds.

    If the block fails, the temporary file is removed and ``path`` is left as it was.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _create_temp_beside(path)
    try:
        with os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8") as handle:
            yield handle
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` through :func:`atomic_writer`."""
    with atomic_writer(path) as handle:
        handle.write(text)


def write_json(path: str | Path, data) -> None:
    write_text_atomic(path, json.dumps(data, ensure_ascii=False, indent=2) + "\n")


def read_json(path: str | Path):
    return json.loads(Path(path).read_text(encoding="utf-8"))


def read_jsonl_field(
    path: str | Path, field: str, limit: int | None = None, kind: str = "data"
) -> list:
    """``field`` of each record of a JSONL file (the first ``limit`` records).

    Errors name the file and the line.
    """
    path = Path(path)
    if not path.is_file():
        raise MminferError(f"{kind} {path} does not exist.")
    values = []
    # surrogateescape: a byte that is not UTF-8 becomes a lone surrogate, so that the line
    # holding it can be named.
    with path.open(encoding="utf-8", errors="surrogateescape") as lines:
        for number, line in enumerate(lines, start=1):
            if limit is not None and len(values) == limit:
                break
            try:
                line.encode("utf-8")
            except UnicodeEncodeError as exc:
                byte = ord(line[exc.start]) - 0xDC00
                raise MminferError(
                    f"{kind} {path} line {number} is not valid UTF-8 (byte 0x{byte:02x} at "
                    f"character {exc.start + 1}); save the file as UTF-8."
                ) from None
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise MminferError(f"{path} line {number} is not valid JSON ({exc.msg}).") from None
            if not isinstance(record, dict) or field not in record:
                raise MminferError(f"{path} line {number} has no field '{field}'.")
            values.append(record[field])
    return values


def sha256_of(path: str | Path) -> str:
    """Sha256 of a file, or of a folder's files (name and content, in sorted order)."""
    path = Path(path)
    digest = hashlib.sha256()
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for file in files:
        if path.is_dir():
            digest.update(str(file.relative_to(path)).encode())
        with file.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()
