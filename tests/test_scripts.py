"""The rule scripts run by hand (`python scripts/cache.py --help`): each flag reaches its job under
the job's own parameter name, and the files come out as the rules write them."""

from __future__ import annotations

import json
import runpy
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from mminfer.demo.corpus import write_corpus
from mminfer.measures.sweep.measure import SweepSettings
from mminfer.timing.ab import Rounds
from mminfer.workflow.script import run_rule, section_keys

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


@pytest.fixture(scope="module")
def val_data(tiny_corpus, tmp_path_factory) -> Path:
    return write_corpus(tiny_corpus, tmp_path_factory.mktemp("data"))["pretrain_val.jsonl"]


def run_by_hand(script: str, **flags) -> None:
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
    run_by_hand("cache.py", **prompt_flags, outdir=tmp_path)
    count = read(tmp_path / "count.json")
    assert (count["prompt_len"], count["new_tokens"]) == (21, 4)  # bos + 20, as the flags said
    assert read(tmp_path / "same.json")["same_ids"] is True


def test_time_by_hand(prompt_flags, tmp_path):
    out, latency_out = tmp_path / "time.json", tmp_path / "latency.json"
    rounds = {"warmup": 1, "runs": 2, "max_runs": 2, "threads": 1, "speed_tokens": [2, 8]}
    run_by_hand("time_generation.py", **prompt_flags, **rounds, out=out, latency_out=latency_out)
    timing = read(out)
    assert (timing["new_tokens"], timing["runs"], timing["threads"]) == (4, 2, 1)
    latency = read(latency_out)
    assert latency["speed_tokens"] == [2]  # 8 is past the 4 new tokens
    assert [run["seconds"] for run in latency["with_cache"]["runs"]] == timing["with_cache_runs_s"]


def test_kvbytes_by_hand(tiny_checkpoint, tmp_path):
    run_by_hand("kvbytes.py", pretrain=tiny_checkpoint, tokens=12, out=tmp_path / "kv.json")
    kv = read(tmp_path / "kv.json")
    assert kv["tokens"] == 12 and kv["measured_bytes"] == kv["formula_bytes"]


@pytest.mark.parametrize("sampler", [False, True])
def test_temperature_by_hand(tiny_sft_checkpoint, tiny_tokenizer_dir, tmp_path, sampler):
    flags = {"sampler_out": tmp_path / "sampler.json"} if sampler else {}
    run_by_hand(
        "temperature.py",
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
    run_by_hand(
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
        run_by_hand("kvbytes.py", pretrain=tiny_checkpoint, out=tmp_path / "kv.json", dtype="fp8")
    assert exited.value.code == 2 and "invalid choice: 'fp8'" in capsys.readouterr().err
    assert not (tmp_path / "kv.json").exists()


class Named(list):
    """A stand-in for Snakemake's named lists: the values in order, each also by its name."""

    def __init__(self, **named):
        super().__init__(named.values())
        self.named = named

    def __getattr__(self, name):
        try:
            return self.__dict__["named"][name]
        except KeyError:
            raise AttributeError(name) from None

    def items(self):
        return self.named.items()


def test_a_rule_fills_each_job_parameter_by_its_name_and_type(tmp_path):
    """run_rule: params and inputs by name, a settings record from its fields or its section,
    ``out`` the first output, ``<name>_out`` output ``name``, the tokenizer's folder, threads."""
    sweep = {"lengths": [2], "warmup": 0, "runs": 1, "all_steps_up_to": 1, "spread_steps": 1}
    snakemake = SimpleNamespace(
        input=Named(tokenizer=["tok/tokenizer.json", "tok/tokenizer_config.json"]),
        params=Named(warmup=1, runs=3, max_runs=5, sweep=sweep, new_tokens=4),
        output=Named(time="time.json", latency="latency.json"),
        log=[str(tmp_path / "job.log")],
        threads=2,
    )
    seen = {}

    def job(tokenizer, rounds: Rounds, sweep: SweepSettings, new_tokens, threads, out, latency_out):
        seen.update(arguments=locals())

    run_rule(snakemake, job)
    assert {k: v for k, v in seen["arguments"].items() if k != "seen"} == {
        "tokenizer": "tok",
        "rounds": Rounds(warmup=1, runs=3, max_runs=5),
        "sweep": SweepSettings(**sweep),
        "new_tokens": 4,
        "threads": 2,
        "out": "time.json",
        "latency_out": "latency.json",
    }


def test_a_rule_fills_a_parameter_of_another_name_from_what_it_reads(tmp_path):
    """run_rule(snakemake, job, name=read): ``read(snakemake)`` is parameter ``name``'s value
    (a wildcard, a folder of an output, the inputs whole), beside those filled by their names."""
    snakemake = SimpleNamespace(
        input=Named(source="sweep.json"),
        params=Named(caption="a caption"),
        output=Named(plot="sweep.png"),
        wildcards=SimpleNamespace(plot="sweep"),
        log=[str(tmp_path / "job.log")],
        threads=1,
    )
    seen = {}

    def job(kind, source, files, out):
        seen.update(kind=kind, source=source, files=list(files), out=out)

    run_rule(snakemake, job, kind=lambda rule: rule.wildcards.plot, files=lambda rule: rule.input)
    assert seen == {
        "kind": "sweep",
        "source": "sweep.json",
        "files": ["sweep.json"],
        "out": "sweep.png",
    }


def test_a_sections_keys_are_its_schema_keys_in_order():
    assert section_keys("kvbytes") == ["kvbytes.tokens", "kvbytes.seed"]
    assert section_keys("time", "latency", without=("time.threads",)) == [
        "time.warmup",
        "time.runs",
        "time.max_runs",
        "latency.speed_tokens",
        "latency.cost_rounds",
    ]


def test_a_job_that_opens_no_model_is_filled_without_importing_torch():
    """The plot and report jobs draw and render: filling their parameters must not import torch
    (two seconds a job) to tell whether one is a ModelSource."""
    code = (
        "import sys\n"
        "from mminfer.report.plot_job import plot_job\n"
        "from mminfer.workflow.script import arguments\n"
        "values = {'kind': 'sweep', 'source': 'sweep.json'}\n"
        "filled = arguments(plot_job, values, None, None, lambda name: 'sweep.png')\n"
        "print(sorted(filled), 'torch' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["['kind',", "'out',", "'source']", "False"]
