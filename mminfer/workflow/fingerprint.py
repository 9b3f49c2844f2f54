"""The content of a user's input file as a sha256, hashed once while the file stays the same.

Snakemake reruns a rule when an input is newer than its outputs; a file replaced by an older one
(``cp -p``, ``rsync -a``, a restore from backup, an unpacked archive) would rerun nothing. So every
rule that reads a checkpoint, a LoRA, a tokenizer or a validation file holds their sha256 under
``params:`` (rules/common.smk), and a changed content reruns it whatever the file's clock says.

Snakemake evaluates those params every time it builds the DAG, in the main process and again in
each job. A multi-GB checkpoint is therefore hashed once and remembered in a small JSON file under
the stat that identifies this very content: device, inode, size, modification and change time in
nanoseconds. ``cp -p`` over a file keeps its inode and backdates its mtime, but the kernel moves its
ctime to now, which no user can set back: a remembered hash is never reused for other bytes. As git
does for its index, a file whose ctime is within SETTLE_NS of now is hashed but not remembered: the
kernel's clock ticks in milliseconds, and a second change in the same tick would keep the key. A
file touched but unchanged is hashed again (one cost, same hash, no rerun). Imports nothing heavy.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from mminfer.io import sha256_of, write_text_atomic

ABSENT = "absent"  # the fingerprint of a path that does not exist (the run stops elsewhere)
SETTLE_NS = 2 * 10**9  # a file changed more recently than this is not remembered yet


def newest_ctime_ns(path: Path) -> int:
    """The latest change time of a file, or of any file in a folder."""
    if path.is_dir():
        return max(
            (file.stat().st_ctime_ns for file in path.rglob("*") if file.is_file()), default=0
        )
    return path.stat().st_ctime_ns


def stat_key(path: Path) -> str:
    """What identifies a file's content without reading it: device, inode, size, mtime and ctime
    in ns (a folder: each file's, by relative name, as :func:`mminfer.io.sha256_of` reads it)."""
    if path.is_dir():
        files = sorted(file for file in path.rglob("*") if file.is_file())
        return ";".join(f"{file.relative_to(path)}={stat_key(file)}" for file in files)
    stat = path.stat()
    fields = (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)
    return ":".join(str(field) for field in fields)


class Fingerprints:
    """Sha256 of files, remembered in ``cache`` (a JSON file) by path and stat key.

    A cache that cannot be read starts empty; one that cannot be written is left alone (a
    read-only working folder hashes every time, nothing more).
    """

    def __init__(self, cache: str | Path, settle_ns: int = SETTLE_NS):
        self.cache = Path(cache)
        self.settle_ns = settle_ns
        self.known = self.read()

    def read(self) -> dict[str, dict[str, str]]:
        try:
            known = json.loads(self.cache.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(known, dict):
            return {}
        return known

    def write(self) -> None:
        try:
            self.cache.parent.mkdir(parents=True, exist_ok=True)
            write_text_atomic(self.cache, json.dumps(self.known, indent=1, sort_keys=True))
        except OSError:
            pass

    def sha256(self, path: str | Path) -> str:
        """The sha256 of ``path`` (a file or a folder), hashed only when its stat key is new."""
        path = Path(path)
        if not path.exists():
            return ABSENT
        name = os.path.abspath(path)
        key = stat_key(path)
        remembered = self.known.get(name)
        if isinstance(remembered, dict) and remembered.get("stat") == key:
            return str(remembered["sha256"])
        digest = sha256_of(path)
        unchanged = stat_key(path) == key  # nothing changed while it was read
        settled = time.time_ns() - newest_ctime_ns(path) > self.settle_ns
        if unchanged and settled:
            self.known[name] = {"stat": key, "sha256": digest}
            self.write()
        return digest

    def of(self, paths) -> dict[str, str]:
        """Each path's sha256, by path (a rule's params: a changed value reruns the rule)."""
        return {str(path): self.sha256(path) for path in paths}
