"""Writing results safely: a killed job never leaves a half-written file behind."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write to a temporary file beside ``path``, then rename it over ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_json(path: str | Path, data) -> None:
    write_text_atomic(path, json.dumps(data, ensure_ascii=False, indent=2) + "\n")


def read_json(path: str | Path):
    return json.loads(Path(path).read_text(encoding="utf-8"))


def read_jsonl_field(path: str | Path, field: str, limit: int | None = None, kind: str = "data") -> list:
    """``field`` of the records of a JSONL file in order (blank lines skipped), the first ``limit`` if
    given. A missing file, a malformed line or a record without the field is a clear error naming the
    file and the line."""
    from mminfer.errors import MminferError

    path = Path(path)
    if not path.is_file():
        raise MminferError(f"{kind} {path} does not exist.")
    values = []
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if limit is not None and len(values) == limit:
                break
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
    """sha256 of a file, or of a folder's files (name and content, in sorted order)."""
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
