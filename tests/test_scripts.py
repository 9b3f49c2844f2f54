"""The rule scripts: run by hand (`python scripts/cache.py --help`), each flag reaches its job
under the job's own parameter name and the files come out as the rules write them; run by a rule,
each reads by name only the values its rule names, and no argument is matched by reflection."""

from __future__ import annotations

import json
import re
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

from mminfer import measurements
from mminfer.demo.corpus import write_corpus
from mminfer.workflow.script import section_keys

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


@pytest.fixture(scope="module")
def val_data(tiny_corpus, tmp_path_factory) -> Path:
    return write_corpus(tiny_corpus, tmp_path_factory.mktemp("data"))["pretrain_val.jsonl"]


def hand_run(script: str, **flags) -> None:
    """Run ``script`` as ``python scripts/<script> --name value ...`` (a list: several values)."""
    argv = [str(SCRIPTS / script)]
    for name, value in flags.items():
        values = value if isinstance(value, list) else [value]
        argv += ["--" + name.replace("_", "-"), *map(str, values)]
    saved = sys.argv
    sys.argv = [*argv, "--backend", "builtin"]
    try:
        runpy.run_path(str(SCRIPTS / script), run_name="__main__")
    finally:
        sys.argv = saved


def read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture
def prompt_flags(tiny_checkpoint, tiny_tokenizer_dir, val_data) -> dict:
    """The task's prompt from 2 documents, 20 tokens after bos, then 4 new tokens."""
    paths = {"pretrain": tiny_checkpoint, "tokenizer": tiny_tokenizer_dir, "val_data": val_data}
    return paths | {"docs": 2, "prompt_tokens": 20, "new_tokens": 4}


def test_cache_by_hand(prompt_flags, tmp_path):
    hand_run("cache.py", **prompt_flags, outdir=tmp_path)
    count = read(tmp_path / "count.json")
    assert (count["prompt_len"], count["new_tokens"]) == (21, 4)  # bos + 20, as the flags said
    assert read(tmp_path / "same.json")["same_ids"] is True


def test_time_by_hand(prompt_flags, tmp_path):
    out, latency_out = tmp_path / "time.json", tmp_path / "latency.json"
    rounds = {"warmup": 1, "runs": 2, "max_runs": 2, "threads": 1, "speed_tokens": [2, 8]}
    hand_run("time_generation.py", **prompt_flags, **rounds, out=out, latency_out=latency_out)
    timing = read(out)
    assert (timing["new_tokens"], timing["runs"], timing["threads"]) == (4, 2, 1)
    latency = read(latency_out)
    assert latency["speed_tokens"] == [2]  # 8 is past the 4 new tokens
    assert [run["seconds"] for run in latency["with_cache"]["runs"]] == timing["with_cache_runs_s"]


def test_kvbytes_by_hand(tiny_checkpoint, tmp_path):
    hand_run("kvbytes.py", pretrain=tiny_checkpoint, tokens=12, out=tmp_path / "kv.json")
    kv = read(tmp_path / "kv.json")
    assert kv["tokens"] == 12 and kv["measured_bytes"] == kv["formula_bytes"]


@pytest.mark.parametrize("sampler", [False, True])
def test_temperature_by_hand(tiny_sft_checkpoint, tiny_tokenizer_dir, tmp_path, sampler):
    flags = {"sampler_out": tmp_path / "sampler.json"} if sampler else {}
    hand_run(
        "temp.py",
        sft=tiny_sft_checkpoint,
        tokenizer=tiny_tokenizer_dir,
        temperatures=[1.0, 0.3],
        samples=3,
        new_tokens=3,
        out=tmp_path / "temp.json",
        **flags,
    )
    temp = read(tmp_path / "temp.json")
    assert list(temp) == ["0.3", "1.0"] and temp["0.3"]["samples"] == 3
    assert (tmp_path / "sampler.json").exists() is sampler  # only when asked for
    if sampler:
        checked = read(tmp_path / "sampler.json")
        assert checked["temperature"] == 1.0 and checked["samples"] == 3
        assert checked["identical_with_and_without_cache"] == 3


def test_topp_by_hand(tiny_checkpoint, tiny_tokenizer_dir, tmp_path):
    hand_run(
        "topp.py",
        pretrain=tiny_checkpoint,
        tokenizer=tiny_tokenizer_dir,
        ps=[0.5, 0.9],
        out=tmp_path / "topp.json",
        detail=tmp_path / "detail.json",
    )
    assert list(read(tmp_path / "topp.json")) == ["0.5", "0.9"]
    assert read(tmp_path / "detail.json")["ps"] == [0.5, 0.9]


def test_a_model_flag_outside_the_schemas_values_is_refused(tiny_checkpoint, tmp_path, capsys):
    with pytest.raises(SystemExit) as exited:
        hand_run("kvbytes.py", pretrain=tiny_checkpoint, out=tmp_path / "kv.json", dtype="fp8")
    assert exited.value.code == 2 and "invalid choice: 'fp8'" in capsys.readouterr().err
    assert not (tmp_path / "kv.json").exists()


RULES = Path(__file__).resolve().parents[1] / "rules"


def rule_bodies() -> dict[str, str]:
    """Each rule of rules/*.smk: its body, by name."""
    text = "\n".join(path.read_text(encoding="utf-8") for path in sorted(RULES.glob("*.smk")))
    return dict(re.findall(r"^rule (\w+):\n(.*?)(?=^rule |\Z)", text, re.M | re.S))


def declared(body: str, section: str) -> set[str]:
    """The names a rule's ``section`` (input, output, params) gives its values (``name=...``)."""
    match = re.search(rf"^    {section}:\n(.*?)(?=^    \w+:|\Z)", body, re.M | re.S)
    if match is None:
        return set()
    return set(re.findall(r"^\s+(\w+)=", match.group(1), re.M))


# What the helpers of mminfer/workflow/script.py read of a rule, besides its model's input.
HELPERS = {
    "rule_prompt(snakemake)": {
        "input": {"tokenizer", "val_data"},
        "params": {"docs", "prompt_tokens"},
    },
    "rule_model(snakemake": {"params": {"model"}},
    "rule_model(snakemake)": {"input": {"pretrain"}},
    'rule_model(snakemake, "pretrain")': {"input": {"pretrain"}},
    'rule_model(snakemake, "sft")': {"input": {"sft", "sft_lora"}},
}


@pytest.mark.parametrize("rule", list(rule_bodies()))
def test_a_rule_script_reads_the_fields_its_rule_names(rule):
    """A rule script names each value it reads (``snakemake.params.new_tokens``, ...), as does a
    helper it calls: each is a value its rule gives that name (a measuring rule's inputs are
    those of ``reads``)."""
    body = rule_bodies()[rule]
    script = re.search(r'script:\n\s+"\.\./scripts/(\w+\.py)"', body)
    if script is None:
        return  # a shell rule (cache_script)
    text = (SCRIPTS / script.group(1)).read_text(encoding="utf-8")
    named = {section: declared(body, section) for section in ("input", "output", "params")}
    if f'**reads("{rule}"),' in body:
        named["input"] |= set(measurements.rule_reads(rule))
    read = set(re.findall(r"snakemake\.(input|output|params)\.(\w+)\b(?!\()", text))
    for call, fields in HELPERS.items():
        if call in text:
            read |= {(section, name) for section, names in fields.items() for name in names}
    assert {(section, name) for section, name in read if name not in named[section]} == set()


def test_no_argument_is_matched_by_reflection():
    """Each rule script calls its one function with every argument named, the rule's from
    ``snakemake.input``, ``.params`` and ``.output``, the hand run's from its flags (the shape of
    rna-seq-star-deseq2's scripts): nothing in mminfer/workflow/ fills a function's parameters by
    reading its signature or its type hints."""
    workflow = Path(__file__).resolve().parents[1] / "mminfer" / "workflow"
    for path in workflow.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        for reflection in ("import inspect", "signature(", "get_type_hints", "__annotations__"):
            assert reflection not in text, f"{path.name}: {reflection}"
    for path in SCRIPTS.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "run_rule" not in text and "run_by_hand" not in text, path.name
        if 'if "snakemake" in globals():' in text:
            assert "globals():\n    with job_log(snakemake.log[0]):\n" in text, path.name


def test_a_sections_keys_are_its_schema_keys_in_order():
    assert section_keys("kvbytes") == ["kvbytes.tokens", "kvbytes.seed"]
    assert section_keys("time", "latency", without=("time.threads",)) == [
        "time.warmup",
        "time.runs",
        "time.max_runs",
        "latency.speed_tokens",
        "latency.cost_rounds",
    ]


@pytest.mark.parametrize("script", ["plot.py", "report.py", "compare.py"])
def test_a_script_that_opens_no_model_imports_no_torch(script):
    """The plot, report and compare jobs draw and render: their imports (the adapter's helpers
    among them) must not import torch, two seconds a job."""
    code = (
        "import runpy, sys\n"
        f"runpy.run_path({str(SCRIPTS / script)!r}, run_name='rule_script')\n"
        "print('torch' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False"]
