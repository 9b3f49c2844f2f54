"""A results folder this user cannot write stops a run before any job, naming the config key.

As root every write succeeds, so the tests make the folder unwritable in ways root obeys too: an
immutable folder (``chattr +i``, where the file system and the capabilities allow it), a child
process that drops to the user ``nobody`` and looks at the task's default /root/mm/infer, and
``os.access`` replaced (which proves the message, not the permission check).
"""

from __future__ import annotations

import os
import pwd
from pathlib import Path

import pytest

from mminfer.errors import MminferError
from mminfer.workflow import inputs
from mminfer.workflow.inputs import check_folder_can_exist, resolve_runs


def unwritable_folder(folder, key: str) -> str | None:
    """What the one walk up from a folder named by config key ``key`` says about writing it."""
    return check_folder_can_exist(folder, f"config key '{key}'", key)


def test_a_folder_that_cannot_be_created_names_the_key_and_the_way_out(immutable_folder):
    problem = unwritable_folder(immutable_folder / "mm" / "infer", "outdir")
    assert problem.startswith("config key 'outdir': this user (")
    assert f"{immutable_folder} is not writable, so it cannot be created" in problem
    assert "`snakemake --cores 2 --config outdir=results`" in problem


def test_an_existing_folder_that_cannot_be_written_is_named(immutable_folder):
    problem = unwritable_folder(immutable_folder, "demo_dir")
    assert f"cannot write the folder {immutable_folder}: it is not writable" in problem
    assert "--config demo_dir=results" in problem


def test_a_folder_that_can_be_written_or_created_passes_and_a_file_in_the_way_stops(tmp_path):
    assert unwritable_folder(tmp_path, "outdir") is None
    assert unwritable_folder(tmp_path / "new" / "deeper", "outdir") is None
    assert unwritable_folder("results", "outdir") is None  # below the working directory
    (tmp_path / "file").write_text("x", encoding="utf-8")
    with pytest.raises(MminferError, match="config key 'outdir': .* is a file, not a folder"):
        unwritable_folder(tmp_path / "file" / "out", "outdir")


def test_resolve_runs_names_an_unwritable_outdir_once(immutable_folder, tmp_path):
    """The models' folders below an outdir that cannot be created are not named again."""
    (tmp_path / "second.pth").write_bytes(b"x")
    outdir = immutable_folder / "mm" / "infer"
    second = str(tmp_path / "second.pth")
    absent = {key: str(tmp_path / "absent" / key) for key in ("pretrain", "sft", "val_data")}
    config = absent | {  # the task's model: the demo's
        "tokenizer": str(tmp_path / "absent" / "tokenizer"),
        "demo": "auto",
        "demo_dir": str(tmp_path / "demo"),
        "outdir": str(outdir),
        "models": {"second": {"pretrain": second, "sft": second}},
    }
    runs, unwritable = resolve_runs(config)
    assert list(runs) == [str(outdir), str(outdir / "models" / "second")]
    assert len(unwritable) == 1 and unwritable[0].startswith("config key 'outdir': this user (")


def test_the_message_follows_os_access(tmp_path, monkeypatch):
    """The message's wording when access is refused (proves the wording, not the permissions)."""
    monkeypatch.setattr(inputs.os, "access", lambda path, mode: False)
    problem = unwritable_folder(tmp_path / "infer", "outdir")
    assert f"{tmp_path} is not writable" in problem
    assert f"this user ({pwd.getpwuid(os.getuid()).pw_name})" in problem


@pytest.mark.skipif(os.getuid() != 0, reason="dropping to another user needs root")
def test_the_tasks_default_is_refused_for_a_user_who_is_not_root():
    """In a child process running as nobody: the real permission check on /root/mm/infer."""
    try:
        nobody = pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("no user nobody")
    if os.stat("/root").st_mode & 0o002:
        pytest.skip("/root is writable by everyone here")
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # the child: drop to nobody, check, report through the pipe, exit
        try:
            os.close(read)
            os.setgid(nobody.pw_gid)
            os.setuid(nobody.pw_uid)
            problem = unwritable_folder("/root/mm/infer", "outdir") or "None"
            os.write(write, problem.encode("utf-8"))
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, encoding="utf-8") as pipe:
        problem = pipe.read()
    os.waitpid(child, 0)
    assert problem.startswith("config key 'outdir': this user (nobody) cannot write the folder")
    assert "/root is not writable, so it cannot be created" in problem
    assert "--config outdir=results" in problem


def test_the_default_outdir_is_still_the_tasks_path():
    schema = inputs.read_schema()
    assert schema["properties"]["outdir"]["default"] == "/root/mm/infer"
    assert Path(schema["properties"]["outdir"]["default"]).is_absolute()
