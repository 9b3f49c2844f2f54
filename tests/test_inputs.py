"""The configuration (schema checks, input resolution), the prompt built from validation data, and
atomic result writing."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import yaml

from mminfer.errors import MminferError
from mminfer.io import read_json, write_json
from mminfer.model.prompts import pretrain_prompt, read_documents
from mminfer.workflow.inputs import (
    check_config,
    config_errors,
    demo_paths,
    model_params,
    parsed_config,
    read_schema,
    resolve_inputs,
    resolve_runs,
)

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def schema() -> dict:
    return yaml.safe_load((REPO / "schemas" / "config.schema.yaml").read_text(encoding="utf-8"))


@pytest.fixture
def repo_config() -> dict:
    """config.yaml with the schema's defaults filled in (a fresh copy per test)."""
    return parsed_config(REPO / "config.yaml")


def with_value(config: dict, dotted: str, value) -> dict:
    changed = copy.deepcopy(config)
    *parents, last = dotted.split(".")
    node = changed
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node[part]
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return changed


# --- config schema --------------------------------------------------------------------------------


def test_repo_config_passes_the_schema(schema):
    raw = yaml.safe_load((REPO / "config.yaml").read_text(encoding="utf-8")) or {}  # unchecked
    assert config_errors(raw, schema) == []
    check_config(raw, schema)
    check_config({}, schema)  # every key has a default


@pytest.mark.parametrize(
    "key, value, allowed",
    [
        ("temp.temperatures.0", -0.3, "allowed: > 0"),
        ("temp.temperatures.1", 0, "allowed: > 0"),
        ("topp.ps.0", 0, "allowed: (0, 1]"),
        ("topp.ps.2", 1.5, "allowed: (0, 1]"),
        ("temp.samples", 0, "allowed: >= 1"),
        ("backend", "foo", "allowed: auto, minimind, builtin"),
        ("dtype", "int8", "allowed: float32, bfloat16, float16"),
        ("demo", "sometimes", "allowed: auto, always, never"),
        ("cache.new_tokens", 0, "allowed: >= 1"),
        ("kvbytes.tokens", "100", ""),  # the wrong type
    ],
)
def test_bad_value_names_the_key_and_allowed_range(repo_config, schema, key, value, allowed):
    errors = config_errors(with_value(repo_config, key, value), schema)
    assert len(errors) == 1 and errors[0].startswith(f"config key '{key}'") and allowed in errors[0]


def test_check_config_raises_with_every_error(repo_config, schema):
    config = with_value(with_value(repo_config, "temp.samples", 0), "backend", "foo")
    with pytest.raises(MminferError) as info:
        check_config(config, schema)
    assert "config key 'temp.samples'" in str(info.value) and "config key 'backend'" in str(
        info.value
    )


def test_unknown_key_is_reported(repo_config, schema):
    config = dict(repo_config, temperature=0.7)
    errors = config_errors(config, schema)
    assert len(errors) == 1 and "temperature" in errors[0]


# --- resolve_inputs -------------------------------------------------------------------------------


@pytest.fixture
def course_files(tmp_path, tiny_tokenizer_dir) -> dict:
    (tmp_path / "pretrain.pth").write_bytes(b"x")
    (tmp_path / "sft.pth").write_bytes(b"x")
    (tmp_path / "val.jsonl").write_text('{"text": "a"}\n', encoding="utf-8")
    return {
        "pretrain": str(tmp_path / "pretrain.pth"),
        "sft": str(tmp_path / "sft.pth"),
        "val_data": str(tmp_path / "val.jsonl"),
        "tokenizer": str(tiny_tokenizer_dir),
        "demo_dir": str(tmp_path / "demo"),
    }


@pytest.fixture
def absent_files(tmp_path) -> dict:
    return {
        "pretrain": str(tmp_path / "no" / "pretrain.pth"),
        "sft": str(tmp_path / "no" / "sft.pth"),
        "val_data": str(tmp_path / "no" / "val.jsonl"),
        "tokenizer": str(tmp_path / "no" / "tok"),
        "demo_dir": str(tmp_path / "demo"),
    }


def test_all_inputs_present_resolve_to_course(course_files):
    resolved = resolve_inputs(dict(course_files, demo="auto"))
    assert resolved["model_set"] == "course"
    assert {k: resolved[k] for k in ("pretrain", "sft", "val_data", "tokenizer")} == {
        k: course_files[k] for k in ("pretrain", "sft", "val_data", "tokenizer")
    }


def test_no_inputs_present_resolve_to_demo_paths(absent_files):
    resolved = resolve_inputs(dict(absent_files, demo="auto"))
    demo = Path(absent_files["demo_dir"])
    assert resolved == {
        "model_set": "demo",
        "pretrain": str(demo / "pretrain.pth"),
        "sft": str(demo / "sft.pth"),
        "val_data": str(demo / "corpus" / "pretrain_val.jsonl"),
        "tokenizer": str(demo / "tokenizer"),
        "sft_lora": None,  # config key sft_lora unset
    }
    assert resolved == {"model_set": "demo", **demo_paths(demo), "sft_lora": None}


def test_some_inputs_present_is_an_error_naming_missing_keys(course_files, absent_files):
    config = dict(
        course_files, sft=absent_files["sft"], tokenizer=absent_files["tokenizer"], demo="auto"
    )
    with pytest.raises(MminferError) as info:
        resolve_inputs(config)
    message = str(info.value)
    assert "config key 'sft'" in message and "config key 'tokenizer'" in message
    assert "config key 'pretrain'" not in message and "config key 'val_data'" not in message


def test_demo_never_or_always_holds_whatever_inputs_are_there(course_files, absent_files):
    with pytest.raises(MminferError, match="demo is 'never'(.|\\n)*config key 'pretrain'"):
        resolve_inputs(dict(absent_files, demo="never"))
    assert resolve_inputs(dict(course_files, demo="never"))["model_set"] == "course"
    always = resolve_inputs(dict(course_files, demo="always"))
    assert always == {"model_set": "demo", **demo_paths(course_files["demo_dir"]), "sft_lora": None}


def test_demo_loads_with_the_rotary_table_it_was_built_with(repo_config):
    # the demo's .pth carries no config: without this it would load with MiniMind's 32768 positions
    assert model_params(repo_config, "demo")["overrides"] == {
        "max_position_embeddings": repo_config["demo_model"]["max_position_embeddings"]
    }
    assert model_params(repo_config, "course")["overrides"] == {}
    chosen = with_value(repo_config, "model", {"max_position_embeddings": 300})
    overrides = model_params(chosen, "demo")["overrides"]
    assert overrides == {"max_position_embeddings": 300}  # the user's key wins


def test_course_tokenizer_folder_without_its_files_is_an_error(course_files, tmp_path):
    empty = tmp_path / "empty-tokenizer"
    empty.mkdir()
    with pytest.raises(MminferError, match="config key 'tokenizer'.*has no tokenizer.json"):
        resolve_inputs(dict(course_files, tokenizer=str(empty), demo="auto"))


# --- the pretrain prompt --------------------------------------------------------------------------


def write_jsonl(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def val_jsonl(tiny_corpus, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("val") / "pretrain_val.jsonl"
    return write_jsonl(
        path, [json.dumps({"text": doc}, ensure_ascii=False) for doc in tiny_corpus.val]
    )


def test_pretrain_prompt_is_bos_and_first_tokens_of_joined_docs(
    tiny_tokenizer, tiny_corpus, val_jsonl
):
    ids = pretrain_prompt(tiny_tokenizer, val_jsonl, docs=3, prompt_tokens=40)
    joined = " ".join(tiny_corpus.val[:3])
    assert ids == [1] + tiny_tokenizer.encode(joined)[:40]
    assert len(ids) == 41


def test_pretrain_prompt_uses_only_the_first_docs(tiny_tokenizer, tiny_corpus, val_jsonl, tmp_path):
    # changing a later document must not change the prompt
    texts = list(tiny_corpus.val)
    texts[3] = "완전히 다른 문서"
    other = write_jsonl(
        tmp_path / "other.jsonl", [json.dumps({"text": t}, ensure_ascii=False) for t in texts]
    )
    assert pretrain_prompt(tiny_tokenizer, other, 3, 40) == pretrain_prompt(
        tiny_tokenizer, val_jsonl, 3, 40
    )


def test_too_few_prompt_tokens_is_an_error_saying_how_many(tiny_tokenizer, tmp_path):
    path = write_jsonl(tmp_path / "short.jsonl", ['{"text": "가람"}', '{"text": "마을"}'])
    have = len(tiny_tokenizer.encode("가람 마을"))
    with pytest.raises(MminferError) as info:
        pretrain_prompt(tiny_tokenizer, path, docs=2, prompt_tokens=200)
    assert f"have {have} tokens" in str(info.value)
    assert "needs 200" in str(info.value)
    assert "config key 'cache.prompt_tokens', --prompt-tokens in a hand run" in str(info.value)


@pytest.mark.parametrize(
    "lines, count, match",
    [
        (['{"text": "a"}', '{"text": "b"}', '{"text": "c"'], 3, "line 3 is not valid JSON"),
        (['{"text": "a"}', '{"content": "b"}'], 2, "line 2 has no field 'text'"),
        (
            ['{"text": "a"}', '{"text": "b"}'],
            6,
            r"has 2 documents; the prompt needs the first 6 \(config key 'cache.docs', --docs",
        ),
    ],
)
def test_a_bad_validation_file_is_an_error_naming_the_line(tmp_path, lines, count, match):
    with pytest.raises(MminferError, match=match):
        read_documents(write_jsonl(tmp_path / "bad.jsonl", lines), count)


def test_read_documents_skips_blank_lines_and_stops_after_count(tmp_path):
    path = write_jsonl(
        tmp_path / "docs.jsonl", ['{"text": "a"}', "", '{"text": "b"}', "not json at all"]
    )
    assert read_documents(path, 2) == ["a", "b"]  # the bad 4th line is never read


def test_missing_validation_file_is_an_error(tmp_path):
    with pytest.raises(MminferError, match="does not exist"):
        read_documents(tmp_path / "none.jsonl", 1)


def test_invalid_utf8_line_is_an_error_naming_the_file_and_line(tmp_path):
    path = tmp_path / "latin1.jsonl"
    path.write_bytes('{"text": "가람"}\n'.encode() + '{"text": "café"}\n'.encode("latin-1"))
    with pytest.raises(MminferError) as info:
        read_documents(path, 2)
    message = str(info.value)
    assert f"{path} line 2 is not valid UTF-8" in message and "byte 0xe9" in message


def test_invalid_utf8_after_the_documents_needed_is_never_read(tmp_path):
    path = tmp_path / "docs.jsonl"
    path.write_bytes('{"text": "가람"}\n'.encode() + b'{"text": "\xff"}\n')
    assert read_documents(path, 1) == ["가람"]


# --- results folders ------------------------------------------------------------------------------


@pytest.mark.parametrize("below", ["", "infer"])
def test_an_outdir_that_is_or_lies_below_a_regular_file_is_an_error(absent_files, tmp_path, below):
    (tmp_path / "notes.txt").write_text("a file", encoding="utf-8")
    outdir = tmp_path / "notes.txt" / below
    with pytest.raises(
        MminferError, match=f"config key 'outdir'.*{tmp_path / 'notes.txt'} is a file"
    ):
        resolve_runs(dict(absent_files, demo="auto", outdir=str(outdir)))


def test_models_folder_below_a_regular_file_names_the_model(course_files, tmp_path):
    outdir = tmp_path / "out"
    outdir.mkdir()
    (outdir / "models").write_text("a file", encoding="utf-8")
    models = {"second": {"pretrain": course_files["pretrain"], "sft": course_files["sft"]}}
    with pytest.raises(MminferError, match="config key 'models.second'"):
        resolve_runs(dict(course_files, demo="auto", outdir=str(outdir), models=models))


def test_demo_dir_below_a_regular_file_matters_only_for_the_demo(
    course_files, absent_files, tmp_path
):
    (tmp_path / "file").write_text("a file", encoding="utf-8")
    demo_dir = str(tmp_path / "file" / "demo")
    outdir = str(tmp_path / "out")
    runs, unwritable = resolve_runs(
        dict(course_files, demo="auto", outdir=outdir, demo_dir=demo_dir)
    )
    assert runs and unwritable == []
    with pytest.raises(MminferError, match="config key 'demo_dir'"):
        resolve_runs(dict(absent_files, demo="auto", outdir=outdir, demo_dir=demo_dir))


def test_outdir_that_does_not_exist_yet_is_fine(absent_files, tmp_path):
    runs, unwritable = resolve_runs(
        dict(absent_files, demo="auto", outdir=str(tmp_path / "new" / "infer"))
    )
    assert list(runs) == [str(tmp_path / "new" / "infer")] and unwritable == []


# --- io -------------------------------------------------------------------------------------------


def test_write_json_round_trips_replaces_and_leaves_no_temp_file(tmp_path):
    path = tmp_path / "out" / "same.json"
    write_json(path, {"same_ids": False})
    write_json(path, {"same_ids": True, "text": "가람"})
    assert read_json(path) == {"same_ids": True, "text": "가람"}
    assert "가람" in path.read_text(encoding="utf-8")  # not \\u escapes
    assert [p.name for p in path.parent.iterdir()] == ["same.json"]


@pytest.mark.parametrize("interrupted", [False, True])  # not serializable, or before the rename
def test_write_json_failure_keeps_the_old_file(tmp_path, monkeypatch, interrupted):
    import mminfer.io

    path = tmp_path / "count.json"
    write_json(path, {"fed_with_cache": 264})
    if interrupted:
        monkeypatch.setattr(mminfer.io.os, "replace", lambda src, dst: 1 / 0)
    with pytest.raises(ZeroDivisionError if interrupted else TypeError):
        write_json(path, {"fed_with_cache": 1 if interrupted else object()})
    monkeypatch.undo()
    assert read_json(path) == {"fed_with_cache": 264}
    assert [p.name for p in tmp_path.iterdir()] == ["count.json"]


@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o027, 0o640)])
def test_write_json_follows_the_umask_like_a_plain_open(tmp_path, umask, mask, mode):
    umask(mask)
    write_json(tmp_path / "same.json", {"same_ids": True})
    (tmp_path / "plain.json").write_text("{}", encoding="utf-8")
    assert (tmp_path / "same.json").stat().st_mode & 0o777 == mode
    assert (tmp_path / "plain.json").stat().st_mode & 0o777 == mode


def test_rewritten_result_gets_the_umask_mode_not_the_old_files(tmp_path, umask):
    umask(0o077)  # as unreadable as the 0600 files of the old writer
    path = tmp_path / "time.json"
    write_json(path, {"speedup": 1.0})
    umask(0o022)
    write_json(path, {"speedup": 2.0})
    assert path.stat().st_mode & 0o777 == 0o644 and read_json(path) == {"speedup": 2.0}


def test_sha256_of_a_folder_depends_on_names_and_contents(tmp_path):
    from mminfer.io import sha256_of

    folder = tmp_path / "tok"
    folder.mkdir()
    (folder / "a.json").write_text("1")
    (folder / "b.json").write_text("2")
    first = sha256_of(folder)
    assert sha256_of(folder) == first
    (folder / "b.json").write_text("3")
    changed_content = sha256_of(folder)
    (folder / "b.json").rename(folder / "c.json")
    assert len({first, changed_content, sha256_of(folder)}) == 3
    assert sha256_of(folder / "a.json") != sha256_of(folder / "c.json")


@pytest.mark.parametrize("section", ["serve", "sweep", "conversation", "capacity", "temp"])
def test_a_settings_record_takes_every_key_of_its_config_section(section):
    """The rule passes config[section] whole: a key missing from the record or the schema fails."""
    import dataclasses

    from mminfer.measures.capacity.measure import CapacitySettings
    from mminfer.measures.conversation.conversation import ConversationSettings
    from mminfer.measures.serve.measure import ServeSettings
    from mminfer.measures.sweep.measure import SweepSettings
    from mminfer.measures.temp.measure import TempSettings

    records = {
        "serve": ServeSettings,
        "sweep": SweepSettings,
        "conversation": ConversationSettings,
        "capacity": CapacitySettings,
        "temp": TempSettings,
    }
    record = records[section]
    fields = [field.name for field in dataclasses.fields(record)]
    assert fields == list(read_schema()["properties"][section]["properties"])
    defaults = parsed_config()[section]
    assert dataclasses.asdict(record(**defaults)) == defaults


def test_a_config_file_s_order_of_keys_changes_no_section(tmp_path):
    """A rule takes config section sweep whole: the same values in another order are the same."""
    keys = list(read_schema()["properties"]["sweep"]["properties"])
    reordered = {"sweep": {"spread_steps": 4, "runs": 2}}
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(reordered, sort_keys=False), encoding="utf-8")
    sweep = parsed_config(tmp_path / "c.yaml")["sweep"]
    assert list(sweep) == keys and sweep["spread_steps"] == 4
