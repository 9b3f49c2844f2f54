"""A file's sha256 is remembered by its stat, and never reused for other bytes."""

from __future__ import annotations

import hashlib
import json
import os
import time

import pytest

from mminfer.workflow import fingerprint
from mminfer.workflow.fingerprint import ABSENT, Fingerprints

OLD_NS = 946_684_800 * 10**9  # 2000-01-01


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def hashes(monkeypatch) -> list:
    """Every path mminfer.workflow.fingerprint reads to hash, in order."""
    read = []
    real = fingerprint.sha256_of

    def counting(path):
        read.append(path)
        return real(path)

    monkeypatch.setattr(fingerprint, "sha256_of", counting)
    return read


def test_an_unchanged_file_is_hashed_once_across_starts(tmp_path, hashes):
    checkpoint = tmp_path / "pretrain.pth"
    checkpoint.write_bytes(b"weights")
    cache = tmp_path / "cache" / "sha256.json"
    assert Fingerprints(cache, settle_ns=0).sha256(checkpoint) == sha(b"weights")
    assert Fingerprints(cache, settle_ns=0).sha256(checkpoint) == sha(b"weights")  # from the cache
    assert len(hashes) == 1


def test_a_file_changed_just_now_is_not_remembered_yet(tmp_path, hashes):
    checkpoint = tmp_path / "pretrain.pth"
    checkpoint.write_bytes(b"weights")
    cache = tmp_path / "sha256.json"
    assert Fingerprints(cache).sha256(checkpoint) == sha(b"weights")
    assert not cache.exists()  # a second change within the clock's tick would keep its stat
    assert Fingerprints(cache).sha256(checkpoint) == sha(b"weights")
    assert len(hashes) == 2


def test_content_replaced_with_a_backdated_mtime_is_hashed_again(tmp_path, hashes):
    checkpoint = tmp_path / "pretrain.pth"
    checkpoint.write_bytes(b"weights A")
    os.utime(checkpoint, ns=(OLD_NS, OLD_NS))
    cache = tmp_path / "sha256.json"
    assert Fingerprints(cache, settle_ns=0).sha256(checkpoint) == sha(b"weights A")
    time.sleep(0.05)  # past the kernel clock's tick: the ctime below is a later one
    inode = checkpoint.stat().st_ino
    with checkpoint.open("r+b") as handle:  # cp -p: same inode, same size, the old mtime back
        handle.write(b"weights B")
    os.utime(checkpoint, ns=(OLD_NS, OLD_NS))
    assert checkpoint.stat().st_ino == inode and checkpoint.stat().st_mtime_ns == OLD_NS
    assert Fingerprints(cache, settle_ns=0).sha256(checkpoint) == sha(b"weights B")
    assert len(hashes) == 2


def test_a_folder_checkpoint_changes_with_any_of_its_files(tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text("{}", encoding="utf-8")
    (folder / "model.safetensors").write_bytes(b"A")
    cache = tmp_path / "sha256.json"
    first = Fingerprints(cache).sha256(folder)
    (folder / "model.safetensors").write_bytes(b"B")
    os.utime(folder / "model.safetensors", ns=(OLD_NS, OLD_NS))
    assert Fingerprints(cache).sha256(folder) != first


def test_a_missing_file_is_absent_and_remembered_nowhere(tmp_path):
    cache = tmp_path / "sha256.json"
    assert Fingerprints(cache).of([tmp_path / "none.pth"]) == {str(tmp_path / "none.pth"): ABSENT}
    assert not cache.exists()


def test_a_corrupt_or_unwritable_cache_only_costs_a_hash(tmp_path, hashes):
    checkpoint = tmp_path / "pretrain.pth"
    checkpoint.write_bytes(b"weights")
    cache = tmp_path / "sha256.json"
    cache.write_text("not json", encoding="utf-8")
    assert Fingerprints(cache, settle_ns=0).sha256(checkpoint) == sha(b"weights")
    assert json.loads(cache.read_text(encoding="utf-8"))  # rewritten whole
    blocked = tmp_path / "a-file" / "sha256.json"  # its folder cannot be made: a file is there
    (tmp_path / "a-file").write_text("", encoding="utf-8")
    assert Fingerprints(blocked, settle_ns=0).sha256(checkpoint) == sha(b"weights")
