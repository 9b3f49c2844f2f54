"""End-to-end: the Snakemake workflow on tiny inputs, in a temporary results folder.

Two model sets: a "course-like" set the test makes itself (random weights saved as .pth, a small
tokenizer, validation JSONL) and the embedded demo in its micro size. Plans (which jobs would run)
are checked with dry runs; one real `-R time` run checks that nothing else is rewritten.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import rerun_sets
import torch
from oracles import denied
from shapes import never_past, small_config
from snakemake_runner import run_snakemake

from mminfer.demo.corpus import CorpusSpec, build_corpus, tokenizer_training_texts, write_corpus
from mminfer.demo.tokenizer_train import train_tokenizer
from mminfer.io import sha256_of
from mminfer.measurements import (
    MEASUREMENTS,
    REPORT,
    REPORTS,
    TASK_SCRIPT,
    alone_rules,
    measurement,
    picture_file,
    pictures,
    read_result,
    readers,
    report_pictures,
    report_reads,
    result_files,
    task_files,
)
from mminfer.model.loading import save_state_dict
from mminfer.model.tokenizer import load_tokenizer
from mminfer.model.twin import MiniMindConfig, MiniMindForCausalLM, apply_lora
from mminfer.records import from_json, to_json
from mminfer.report.decided import DecisionLog
from mminfer.report.render import printed_as, render_reports
from mminfer.timing.clock import JITTER_VARIABLE
from mminfer.workflow.resultslock import LOCK_NAME

REPO = Path(__file__).resolve().parents[1]
MICRO = REPO / "tests" / "data" / "micro.yaml"
OUTPUTS = result_files()

pytestmark = pytest.mark.slow


def snakemake_command(*args, configfiles=(MICRO,), cores=2) -> list[str]:
    """Targets come first in args: --config (and --configfile) take all values after them."""
    return [
        sys.executable,
        "-m",
        "snakemake",
        *args,
        "--cores",
        str(cores),
        "--configfile",
        *map(str, configfiles),
    ]


def snakemake(
    *args, configfiles=(MICRO,), check=True, cwd=REPO, umask=0o022, cores=2, env=None
) -> subprocess.CompletedProcess:
    """Run snakemake in the repository under a known umask.

    Or in another copy of the workflow: cwd; in another environment: env (None: this process's).
    Each run is a process of its own, forked from one that has imported Snakemake
    (tests/snakemake_runner.py).
    """
    command = snakemake_command(*args, configfiles=configfiles, cores=cores)
    result = run_snakemake(command[3:], cwd=cwd, umask=umask, timeout=600, env=env)
    if check and result.returncode != 0:
        raise AssertionError(
            f"snakemake {' '.join(args)} failed:\n{result.stdout[-3000:]}\n{result.stderr[-5000:]}"
        )
    return result


def dry_run(*args, configfiles=(MICRO,)) -> str:
    """What a dry run (`snakemake -n`) says."""
    result = snakemake("-n", *args, configfiles=configfiles)
    return result.stdout + result.stderr


def jobs_in(plan: str) -> set[str]:
    """Rule names of the jobs a dry run's text would execute."""
    if "Nothing to be done" in plan:
        return set()
    table = plan.split("Job stats:")[1].split("Reasons:")[0] if "Job stats:" in plan else ""
    return {m.group(1) for m in re.finditer(r"^(\w+)\s+\d+\s*$", table, re.M)} - {"total"}


def outputs_in(plan: str, outdir: Path) -> set[str]:
    """The names of the files in ``outdir`` that a dry run's text would write."""
    paths = [
        Path(path)
        for line in plan.splitlines()
        if line.strip().startswith("output:")
        for path in line.split("output:", 1)[1].strip().split(", ")
    ]
    return {path.name for path in paths if path.parent == outdir}


def planned_jobs(*args, configfiles=(MICRO,)) -> set[str]:
    """Rule names of the jobs a dry run would execute."""
    return jobs_in(dry_run(*args, configfiles=configfiles))


@pytest.fixture(scope="module")
def course_inputs(tmp_path_factory) -> dict:
    """Random-weight pretrain and SFT checkpoints, a small tokenizer and validation data."""
    root = tmp_path_factory.mktemp("course")
    corpus = build_corpus(CorpusSpec(seed=1, train_docs=150, val_docs=8, sft_conversations=40))
    write_corpus(corpus, root / "data")
    train_tokenizer(tokenizer_training_texts(corpus), 500, root / "tokenizer")
    vocab = load_tokenizer(root / "tokenizer").vocab_size
    config = small_config(vocab=vocab)
    for name, seed in (("pretrain", 0), ("sft", 1)):
        torch.manual_seed(seed)
        save_state_dict(MiniMindForCausalLM(config), root / f"{name}.pth")
    return {
        "pretrain": root / "pretrain.pth",
        "sft": root / "sft.pth",
        "val_data": root / "data" / "pretrain_val.jsonl",
        "tokenizer": root / "tokenizer",
        "config": config,
        "root": root,
    }


# The end-to-end runs check files and exact figures, not times: each timing job (its entry's
# `alone`) takes one thread, as every other job does, so that two jobs run side by side on the two
# cores instead of one timing job beside an idle core. A job's threads are among its params, so
# every later run on a folder passes the same (course_args holds them).
ONE_THREAD = ["--set-threads", *(f"{rule}=1" for rule in alone_rules())]


def course_args(course_inputs: dict, outdir: Path, **inputs) -> list[str]:
    """Arguments of a run on the course-like inputs (``inputs`` replace some of them): one thread
    per timing job, then --config."""
    paths = {
        key: course_inputs[key] for key in ("pretrain", "sft", "val_data", "tokenizer")
    } | inputs
    return [
        *ONE_THREAD,
        "--config",
        f"outdir={outdir}",
        *(f"{key}={value}" for key, value in paths.items()),
        "minimind_src=/nonexistent",
        "backend=builtin",
    ]


@pytest.fixture(scope="module")
def course_run(course_inputs, tmp_path_factory):
    """One full run on the course-like inputs (umask 022): the report target alone first (the
    files it left are in REPORT_ALONE), then everything.

    Returns the --config arguments and the outdir.
    """
    outdir = tmp_path_factory.mktemp("results")
    args = course_args(course_inputs, outdir)
    snakemake(str(outdir / "report.md"), *args)  # the user's one command: the report target alone
    REPORT_ALONE.update(
        path.name for path in outdir.iterdir() if path.is_file() and not path.name.startswith(".")
    )  # the results' files (the run's lock, .mminfer.lock, aside)
    snakemake(*args)  # then everything: beyond.md and its measurements
    return args, outdir


REPORT_ALONE: set[str] = set()  # the files `snakemake <outdir>/report.md` left in a new folder
# What report.md reads: its measurements' files, their pictures, cache.py (the design card)
REPORT_READS = {
    *(measurement(name).filename for name in report_reads("report")),
    *map(picture_file, report_pictures("report")),
    TASK_SCRIPT,
}


def read(outdir: Path, name: str):
    return json.loads((outdir / name).read_text(encoding="utf-8"))


TASK_FILES = [
    *task_files().values(),
    TASK_SCRIPT,
    REPORT,
]  # the task's JSON files, cache.py, report


def test_report_target_alone_leaves_every_task_file(course_run):
    _, outdir = course_run  # made by `snakemake <outdir>/report.md`, not by `all`
    assert [name for name in TASK_FILES if not (outdir / name).is_file()] == []
    # and nothing beyond the task: the jobs' own (latency.json rides with time.json) and report.md
    assert REPORT_READS | {"latency.json", REPORT} == REPORT_ALONE
    assert "[`cache.py`](cache.py)" in (outdir / "report.md").read_text(
        encoding="utf-8"
    )  # named as the writer


def test_run_writes_every_output_readable_by_others_under_umask_022(course_run):
    _, outdir = course_run
    modes = {name: oct((outdir / name).stat().st_mode & 0o777) for name in OUTPUTS}  # each file
    assert modes == {name: oct(0o644) for name in OUTPUTS} and (outdir / "logs").is_dir()


def test_outputs_have_the_task_keys(course_run, course_inputs):
    _, outdir = course_run
    same, count = read(outdir, "same.json"), read(outdir, "count.json")
    assert {"same_ids", "ids", "prompt_len", "new_tokens"} <= set(same)
    assert same["same_ids"] is True and len(same["ids"]) == 8 and same["prompt_len"] == 41
    assert count["fed_with_cache"] == 41 + 7
    assert count["fed_without_cache"] == 8 * 41 + 8 * 7 // 2
    timing = read(outdir, "time.json")
    assert timing["speedup"] == pytest.approx(timing["without_cache_s"] / timing["with_cache_s"])
    kv = read(outdir, "kvbytes.json")
    config = course_inputs["config"]
    assert (
        kv["measured_bytes"]
        == kv["formula_bytes"]
        == 2 * config.num_hidden_layers * 20 * 2 * 16 * 4
    )
    assert kv["k_shape"] == [1, 20, 2, 16]
    temp = read(outdir, "temp.json")
    assert list(temp) == ["0.3", "1.0", "1.5"]
    assert all(1 <= temp[k]["distinct"] <= 6 for k in temp)
    topp = read(outdir, "topp.json")
    assert list(topp) == ["0.5", "0.9", "0.99"] and all(
        isinstance(v, int) and v >= 1 for v in topp.values()
    )
    assert topp["0.5"] <= topp["0.9"] <= topp["0.99"]


def latency_is_the_time_jobs_own(outdir: Path) -> None:
    """latency.json's runs are time.json's: per run the same seconds, and (run seconds - TTFT) /
    (N - 1) agrees with TPOT to within what lies after the last token's put (end(), generate's
    return and the timing's read): at most 5 ms or 5 % of the run, on a busy machine too."""
    timing, latency = read(outdir, "time.json"), read(outdir, "latency.json")
    n = timing["new_tokens"]
    for path, seconds in (
        ("with_cache", "with_cache_runs_s"),
        ("without_cache", "without_cache_runs_s"),
    ):
        runs = latency[path]["runs"]
        assert [run["seconds"] for run in runs] == timing[seconds]
        for run in runs:
            assert len(run["stamps_s"]) == 1 + n
            sliver = run["seconds"] - run["e2e_s"]
            assert 0 <= sliver <= max(5e-3, 0.05 * run["seconds"])
            tpot = (run["e2e_s"] - run["ttft_s"]) / (n - 1)
            assert run["tpot_s"] == pytest.approx(tpot)
            assert (run["seconds"] - run["ttft_s"]) / (n - 1) == pytest.approx(
                run["tpot_s"], abs=max(5e-3, 0.05 * run["seconds"]) / (n - 1)
            )
    assert latency["verdict"] == timing["verdict"] and latency["runs_done"] == timing["runs_done"]


def test_latency_comes_from_the_time_jobs_own_runs(course_run):
    latency_is_the_time_jobs_own(course_run[1])


def test_report_has_the_sections_and_numbers(course_run):
    _, outdir = course_run
    report = (outdir / "report.md").read_text(encoding="utf-8")
    for heading in ("## KV 캐시", "## 온도", "## top-p"):
        assert re.search(rf"^{re.escape(heading)}$", report, re.M), heading
    timing, kv = read(outdir, "time.json"), read(outdir, "kvbytes.json")
    assert f"speedup {printed_as(timing['speedup'], 'sig')}배" in report  # three digits, one value
    assert f"**{kv['measured_bytes']}**" in report  # the plain number, as the task asks
    assert "builtin" in report and read(outdir, "same.json")["run"]["sha256"][:16] in report
    beyond = (outdir / "beyond.md").read_text(encoding="utf-8")
    for section in ("## 길이에 따른 비용", "## 카드당 사용자 수"):
        assert section in beyond and f"(beyond.md#{section[3:].replace(' ', '-')})" in report
    for picture in ("sweep.png", "temp.png", "topp.png"):
        assert f"]({picture})" in report + beyond  # relative links next to the reports


@pytest.mark.parametrize("name", [name for name in OUTPUTS if name.endswith(".json")])
def test_each_result_files_keys_are_its_records_fields(course_run, name):
    _, outdir = course_run
    data = read(outdir, name)
    entries = [entry for entry in MEASUREMENTS if entry.filename == name]
    record = from_json(entries[0].record, data, name)  # a missing or unknown key raises
    assert to_json(record) == data


def test_the_knobs_are_exact_end_to_end(course_run):
    """Issue 29 on the workflow's files: repetition.json's penalty 1.0 row is temp.json's count at
    its temperature, every masked batch row is its prompt alone (or parts where the gap is
    rounding), and topk.json compares with temp.json's experiment."""
    from mminfer.records import within_rounding

    _, outdir = course_run
    temp, topk = read(outdir, "temp.json"), read(outdir, "topk.json")
    repetition, batch = read(outdir, "repetition.json"), read(outdir, "batch.json")
    key = repr(float(repetition["temperature"]))
    assert repetition["penalties"]["1.0"]["distinct"] == temp[key]["distinct"]
    assert list(topk["temp"]) == list(temp) and topk["top_k"] == 50
    assert all(summary["samples"] == temp[key]["samples"] for summary in topk["temp"].values())
    for row in batch["rows"]:
        rounding = within_rounding(row["max_logit_diff"], row["max_abs_logit"], "float32")
        assert row["finite"] and (row["same_ids"] or rounding), row
    assert batch["rows"][0]["pad"] == 0 and batch["no_mask"]["rows"][0]["same_ids"]
    report = (outdir / "beyond.md").read_text(encoding="utf-8")
    for heading in ("## top-k 함정", "## 반복 페널티", "## 배치와 패딩"):
        assert heading in report


def test_sweep_fed_counts_follow_the_formulas_at_every_length(course_run):
    _, outdir = course_run
    sweep = read(outdir, "sweep.json")
    assert [p["new_tokens"] for p in sweep["points"]] == [2, 4, 8]
    for point in sweep["points"]:
        n, p = point["new_tokens"], sweep["prompt_len"]
        assert point["fed_with_cache"] == p + n - 1
        assert point["fed_without_cache"] == n * p + n * (n - 1) // 2


def test_capacity_batch_check_matches_its_prediction(course_run):
    _, outdir = course_run
    capacity = read(outdir, "capacity.json")
    assert capacity["batch_check"]["matches"] is True
    assert (
        capacity["bytes_per_token"]["bfloat16"]["measured"] * 2
        == capacity["bytes_per_token"]["float32"]["measured"]
    )
    assert 32768 in capacity["contexts"]  # "max": the model's max_position_embeddings


def test_cache_script_copy_runs_standalone(course_run):
    _, outdir = course_run
    result = subprocess.run(
        [sys.executable, str(outdir / "cache.py"), "--help"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert result.returncode == 0 and "--pretrain" in result.stdout


def test_second_run_does_nothing(course_run):
    args, _ = course_run
    assert planned_jobs(*args) == set()


RERUN_TIME = {"time.json", "latency.json", "latency.png", "report.md", "beyond.md"}  # README


def test_the_readme_says_what_rerun_time_redoes():
    (line,) = [
        line
        for line in (REPO / "README.md").read_text(encoding="utf-8").splitlines()
        if line.startswith("snakemake -R time")
    ]
    named = set(re.findall(r"[a-z_]+\.(?:json|png|md)", line.split("#", 1)[1]))
    assert named == RERUN_TIME


def test_the_report_target_plans_only_the_jobs_of_its_files(course_inputs, tmp_path):
    outdir = tmp_path / "fresh"
    plan = dry_run(str(outdir / REPORT), *course_args(course_inputs, outdir))
    task_jobs = {"cache", "cache_script", "time", "kvbytes", "temp", "topp", "plot", "report"}
    assert jobs_in(plan) == task_jobs
    assert outputs_in(plan, outdir) == REPORT_READS | {"latency.json", REPORT}


def test_retiming_the_report_plans_time_and_report_only(course_run):
    args, outdir = course_run
    assert planned_jobs(str(outdir / REPORT), "-R", "time", *args) == {"time", "report"}


def test_rerun_time_redoes_only_time_and_report(course_run, tmp_path):
    args, outdir = course_run
    assert planned_jobs("-R", "time", *args) == {"time", "plot", "report", "beyond", "all"}
    copy = tmp_path / "results"  # the run rewrites a copy: the shared results stay as they were
    shutil.copytree(outdir, copy)  # with their modification times
    args, outdir = [f"outdir={copy}" if arg.startswith("outdir=") else arg for arg in args], copy
    before = {name: (outdir / name).stat().st_mtime_ns for name in OUTPUTS}
    snakemake("-R", "time", *args)
    after = {name: (outdir / name).stat().st_mtime_ns for name in OUTPUTS}
    assert {name for name in OUTPUTS if before[name] != after[name]} == RERUN_TIME


def jobs_after_new(key: str) -> set[str]:
    """The jobs a new file of config key ``key`` reruns: the rules that read it (their entries'
    ``reads``), the pictures drawn from what they write, beyond.md (it reads every measurement)
    and report.md where a rule of its files reads it (every user file has one)."""
    task_rules = {measurement(name).rule for name in report_reads("report")}
    report = {"report"} if set(readers(key)) & task_rules else set()
    return set(readers(key)) | {"plot", "beyond", "all"} | report


def files_after_new(key: str) -> set[str]:
    """The result files a new file of config key ``key`` rewrites (comparison.md aside)."""
    rules = readers(key)
    files = set(REPORTS.values())
    for entry in MEASUREMENTS:
        if entry.rule in rules:
            files |= {entry.filename, *(picture_file(picture.name) for picture in entry.pictures)}
    return files


# --- results follow content, not clocks ----------------------------------------------------------

OLD_MTIME_NS = 946_684_800 * 10**9  # 2000-01-01: older than any result, as cp -p or a backup leaves


def replaced_by_older(path: Path, content: bytes) -> None:
    """``path`` holds ``content`` now, with a modification time long before the results: what
    ``cp -p`` of another file over it leaves (same inode, backdated mtime, a new ctime)."""
    with path.open("r+b") as handle:
        handle.truncate(0)
        handle.write(content)
    os.utime(path, ns=(OLD_MTIME_NS, OLD_MTIME_NS))


def checkpoint_bytes(config: MiniMindConfig, seed: int, tmp: Path) -> bytes:
    torch.manual_seed(seed)
    save_state_dict(MiniMindForCausalLM(config), tmp)
    return tmp.read_bytes()


def other_content(key: str, path: Path, inputs: dict) -> bytes:
    """Bytes for the file of config key ``key`` other than those it holds now (whichever test
    replaced it before), still a valid input of its kind."""
    current = path.read_bytes()
    for variant in range(2):
        content = content_variant(key, path, inputs, variant)
        if content != current:
            return content
    raise AssertionError(f"no other content for {path}")


def content_variant(key: str, path: Path, inputs: dict, variant: int) -> bytes:
    """One of two other contents for the file of config key ``key``."""
    scratch = inputs["root"] / f"scratch-{key}"
    if key in ("pretrain", "sft"):
        return checkpoint_bytes(inputs["config"], 10 + len(key) + variant, scratch)
    if key == "sft_lora":
        state = torch.load(path, weights_only=True)
        torch.save({name: value * (2 + variant) for name, value in state.items()}, scratch)
        return scratch.read_bytes()
    if key == "tokenizer":  # the same tokenizer, written out with another indent
        text = json.loads(path.read_text(encoding="utf-8"))
        return json.dumps(text, indent=1 + variant).encode()
    lines = path.read_text(encoding="utf-8").splitlines()  # val_data: another first document
    first = json.loads(lines[0])
    first["text"] = "새 문서의 첫 문장이다. " * (1 + variant) + first["text"]
    return "\n".join([json.dumps(first, ensure_ascii=False), *lines[1:]]).encode() + b"\n"


def workflow_copy(folder: Path) -> Path:
    """A second checkout of the workflow in ``folder``: its files only, no .venv, no .git."""
    clone = folder / "mminfer"
    clone.mkdir()
    for part in (
        "Snakefile",
        "config.yaml",
        "rules",
        "scripts",
        "mminfer",
        "schemas",
        "profiles",
        "envs",
        "report",
    ):
        if (REPO / part).is_dir():
            shutil.copytree(REPO / part, clone / part, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(REPO / part, clone / part)
    return clone


CONTENT_UMASK = 0o027


@pytest.fixture(scope="module")
def content_run(course_inputs, tmp_path_factory):
    """A full run on copies of the course-like inputs and a LoRA, each free to be replaced, into
    `<tmp>/결과 폴더` (a path with a space and Hangul) under umask 027; and, while it runs, the
    same run from a second checkout.

    The second run starts while the first runs, from another copy of the workflow, so that
    Snakemake's own lock in .snakemake/ does not see the first. Every test leaves the run with
    nothing to do: a replaced input is put back as it was, or rerun under the same umask.
    """
    root = tmp_path_factory.mktemp("content")
    for key in ("pretrain", "sft"):
        shutil.copy2(course_inputs[key], root / f"{key}.pth")
    shutil.copytree(course_inputs["tokenizer"], root / "tokenizer")
    shutil.copy2(course_inputs["val_data"], root / "val.jsonl")
    config = course_inputs["config"]
    torch.manual_seed(4)
    lora = {}
    for name in apply_lora(MiniMindForCausalLM(config), rank=4):
        lora[f"{name}.lora.A.weight"] = torch.randn(4, config.hidden_size) * 0.1
        lora[f"{name}.lora.B.weight"] = torch.randn(config.hidden_size, 4) * 0.1
    torch.save(lora, root / "lora.pth")
    inputs = {
        "pretrain": root / "pretrain.pth",
        "sft": root / "sft.pth",
        "sft_lora": root / "lora.pth",
        "tokenizer": root / "tokenizer",
        "val_data": root / "val.jsonl",
    }
    shared = tmp_path_factory.mktemp("shared")
    outdir = shared / "결과 폴더"
    logs = tmp_path_factory.mktemp("checkout-logs")
    clone = workflow_copy(tmp_path_factory.mktemp("clone"))
    args = course_args(course_inputs, outdir, **inputs)
    with open(logs / "first.out", "w") as out, open(logs / "first.err", "w") as err:
        first = subprocess.Popen(
            snakemake_command(*args),
            cwd=REPO,
            stdout=out,
            stderr=err,
            text=True,
            umask=CONTENT_UMASK,
        )
        try:
            deadline = time.monotonic() + 300
            while (
                not (outdir / LOCK_NAME).exists()
                and first.poll() is None
                and time.monotonic() < deadline
            ):
                time.sleep(0.1)
            second = snakemake(*args, cwd=clone, check=False)
            first.wait(timeout=600)
        finally:
            if first.poll() is None:
                first.kill()
    return {
        "inputs": inputs,
        "outdir": outdir,
        "args": args,
        "shared": shared,
        "first": first,
        "first_err": (logs / "first.err").read_text(),
        "second": second,
        **course_inputs,
    }


CONTENT_KEYS = ["pretrain", "sft", "sft_lora", "tokenizer", "val_data"]


def content_file(content_run: dict, key: str) -> Path:
    """The file of config key ``key`` that content_run reads (the tokenizer's: tokenizer.json)."""
    path = content_run["inputs"][key]
    return path / "tokenizer.json" if key == "tokenizer" else path


@pytest.mark.parametrize("key", CONTENT_KEYS)
def test_a_file_replaced_by_older_content_plans_exactly_its_readers(content_run, key):
    """Every kind of input: its file replaced by other bytes with an older mtime plans exactly
    the rules that read it and exactly their files (the rerun itself: the test below)."""
    outdir, args = content_run["outdir"], content_run["args"]
    path = content_file(content_run, key)
    original, stat = path.read_bytes(), path.stat()
    replaced_by_older(path, other_content(key, path, content_run))
    try:
        assert path.stat().st_mtime_ns < (outdir / REPORT).stat().st_mtime_ns
        plan = dry_run(*args)
        assert jobs_in(plan) == jobs_after_new(key)
        assert outputs_in(plan, outdir) & set(OUTPUTS) == files_after_new(key)
    finally:  # the bytes and times of before: the run has nothing to do again
        with path.open("r+b") as handle:
            handle.truncate(0)
            handle.write(original)
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


@pytest.mark.parametrize("key", CONTENT_KEYS)
def test_every_reader_of_a_file_records_its_sha256(content_run, key):
    """What a new file of ``key`` rewrites holds that file's sha256 in its run block, and every
    input's as it is now: so the rerun of any kind records the new content."""
    outdir = content_run["outdir"]
    path = content_file(content_run, key)
    for name in sorted(files_after_new(key)):
        if not name.endswith(".json"):
            continue
        run = read(outdir, name).get("run")
        if run is None:  # topp.json is the task's bare mapping
            continue
        assert run["inputs"][str(path)] == sha256_of(path), name
        assert all(sha256_of(file) == digest for file, digest in run["inputs"].items()), name


@pytest.mark.parametrize("key", ["sft"])  # every kind's plan and records: the two tests above
def test_a_file_replaced_by_older_content_reruns_exactly_its_readers(content_run, key):
    outdir, args = content_run["outdir"], content_run["args"]
    path = content_file(content_run, key)
    replaced_by_older(path, other_content(key, path, content_run))
    assert path.stat().st_mtime_ns < (outdir / REPORT).stat().st_mtime_ns
    assert planned_jobs(*args) == jobs_after_new(key)
    before = {name: (outdir / name).stat().st_mtime_ns for name in OUTPUTS}
    snakemake(*args, umask=CONTENT_UMASK)  # the umask of the run: its files keep their modes
    after = {name: (outdir / name).stat().st_mtime_ns for name in OUTPUTS}
    assert {name for name in OUTPUTS if before[name] != after[name]} == files_after_new(key)
    rewritten_json = [name for name in files_after_new(key) if name.endswith(".json")]
    for name in rewritten_json:
        run = read(outdir, name).get("run")
        if run is None:  # topp.json is the task's bare mapping
            continue
        assert run["inputs"][str(path)] == sha256_of(path), name
        assert all(sha256_of(file) == digest for file, digest in run["inputs"].items()), name
    assert planned_jobs(*args) == set()  # nothing changed since: nothing to do


def extra_configfile(tmp_path, text: str) -> tuple:
    path = tmp_path / "extra.yaml"
    path.write_text(text, encoding="utf-8")
    return (MICRO, path)


def test_changed_parameter_reruns_its_rule(course_run, tmp_path):
    args, _ = course_run
    jobs = planned_jobs(
        *args, configfiles=extra_configfile(tmp_path, "kvbytes: {tokens: 21, seed: 0}\n")
    )
    assert jobs == {"kvbytes", "report", "beyond", "all"}


def test_a_section_passed_whole_reruns_on_a_change_not_on_another_order(course_run, tmp_path):
    """Rule sweep takes config section sweep whole: the same values in another order plan nothing;
    one changed key reruns sweep and what reads sweep.json, nothing else."""
    args, _ = course_run
    restated = "sweep: {spread_steps: 8, runs: 1}\n"  # a default spelt out, then micro.yaml's
    assert planned_jobs(*args, configfiles=extra_configfile(tmp_path, restated)) == set()
    changed = "sweep: {runs: 1, warmup: 0, lengths: [2, 4, 6]}\n"
    jobs = planned_jobs(*args, configfiles=extra_configfile(tmp_path, changed))
    assert "sweep" in jobs and not jobs & {"cache", "time", "serve", "capacity"}


# One key of each rule's section, and the two that reran too little before `named` (time.warmup
# 1 -> 2 beside time.runs 2, latency.cost_rounds 1 -> 2 beside runs 2): tests/rerun_sets.py
# checks every key (about 4 minutes).
SAMPLED_KEYS = (
    "cache.new_tokens",
    "time.warmup",
    "latency.cost_rounds",
    "time.max_runs",
    "temp.seed",
    "topp.sharp_prefix",
    "conversation.users",
    "repetition.penalties",
    "sweep.runs",
    "serve.context",
)


@pytest.mark.parametrize("key", SAMPLED_KEYS)
def test_a_changed_key_reruns_what_its_table_says(course_run, tmp_path, key):
    args, _ = course_run
    extra = tmp_path / "extra.yaml"
    extra.write_text(rerun_sets.changed_config(key), encoding="utf-8")
    table = json.loads(rerun_sets.TABLE.read_text(encoding="utf-8"))
    assert sorted(planned_jobs(*args, configfiles=(MICRO, extra))) == table[key]


def test_partial_course_inputs_stop_before_any_job(course_inputs, tmp_path):
    result = snakemake(
        "-n",
        "--config",
        f"outdir={tmp_path}",
        f"pretrain={course_inputs['pretrain']}",
        f"sft={tmp_path / 'missing.pth'}",
        f"val_data={course_inputs['val_data']}",
        f"tokenizer={course_inputs['tokenizer']}",
        check=False,
    )
    assert result.returncode != 0
    said = result.stdout + result.stderr
    assert "config key 'sft'" in said and "missing.pth" in said


def test_bad_config_value_names_the_key(course_run, tmp_path):
    args, _ = course_run
    extra = extra_configfile(tmp_path, "topp: {prefix: 민수는, sharp_prefix: x, ps: [0.5, 1.5]}\n")
    result = snakemake("-n", *args, configfiles=extra, check=False)
    assert result.returncode != 0 and "config key 'topp.ps.1'" in result.stdout + result.stderr


def test_truncated_checkpoint_fails_cleanly_and_leaves_no_output(course_inputs, tmp_path):
    broken = tmp_path / "broken.pth"
    data = course_inputs["pretrain"].read_bytes()
    broken.write_bytes(data[: len(data) // 2])
    outdir = tmp_path / "out"
    result = snakemake(
        str(outdir / "kvbytes.json"),
        "--config",
        f"outdir={outdir}",
        f"pretrain={broken}",
        f"sft={course_inputs['sft']}",
        f"val_data={course_inputs['val_data']}",
        f"tokenizer={course_inputs['tokenizer']}",
        "backend=builtin",
        check=False,
    )
    assert result.returncode != 0
    log = (outdir / "logs" / "kvbytes.log").read_text(encoding="utf-8")
    assert str(broken) in log and "truncated" in log
    assert not (outdir / "kvbytes.json").exists()
    assert not list(outdir.glob("*.tmp")) and not list(outdir.glob(".*.tmp"))


def assert_failed_cleanly(result, log: Path, said: list[str], outputs: list[Path]) -> None:
    """A job's bad input: non-zero exit, one message in the rule's log naming what is wrong, no
    traceback, and none of the rule's outputs (nor a temporary file) left behind."""
    assert result.returncode != 0
    text = log.read_text(encoding="utf-8")
    for words in said:
        assert words in text, (words, text)
    assert "Traceback" not in text
    for output in outputs:
        assert not output.exists(), output
    assert not list(outputs[0].parent.glob(".*.tmp"))


def test_tokenizer_with_more_ids_than_the_embedding_names_both_keys(course_inputs, tmp_path):
    small = tmp_path / "small_vocab.pth"  # 64 embedding rows against a tokenizer of ~500 ids
    torch.manual_seed(0)
    save_state_dict(
        MiniMindForCausalLM(small_config(vocab=64)),
        small,
    )
    outdir = tmp_path / "out"
    result = snakemake(
        str(outdir / "same.json"), *course_args(course_inputs, outdir, pretrain=small), check=False
    )
    ids = load_tokenizer(course_inputs["tokenizer"]).id_count  # what check_vocab_fits reports
    assert_failed_cleanly(
        result,
        outdir / "logs" / "cache.log",
        [
            "config key 'tokenizer'",
            "config key 'pretrain'",
            f"{ids} token ids",
            "64 rows",
            str(small),
        ],
        [outdir / "same.json", outdir / "count.json"],
    )


def course_shaped(course_inputs: dict, path: Path, seed: int, built_never_past: bool) -> Path:
    """A checkpoint of the course's 6,400 embedding rows, more than the test tokenizer's ids;
    random, or built never to pick a row past the tokenizer's end (shapes.never_past)."""
    torch.manual_seed(seed)
    model = MiniMindForCausalLM(small_config(vocab=6400))
    if built_never_past:
        never_past(model, load_tokenizer(course_inputs["tokenizer"]).id_count)
    save_state_dict(model, path)
    return path


def test_a_tokenizer_of_another_model_stops_naming_it_and_nothing_is_written(
    course_inputs, tmp_path
):
    checkpoints = {
        key: course_shaped(course_inputs, tmp_path / f"{key}.pth", seed, built_never_past=False)
        for key, seed in (("pretrain", 0), ("sft", 1))
    }
    outdir = tmp_path / "out"
    result = snakemake(  # the README's command: the report, one core
        str(outdir / "report.md"),
        *course_args(course_inputs, outdir, **checkpoints),
        check=False,
        cores=1,
    )
    tokenizer = load_tokenizer(course_inputs["tokenizer"])
    assert_failed_cleanly(
        result,
        outdir / "logs" / "cache.log",
        [
            f"config key 'tokenizer': {course_inputs['tokenizer']}",
            f"{tokenizer.id_count} token ids",
            "6400 rows",
            "greedy answer of step 1",
        ],
        [outdir / "same.json", outdir / "count.json"],
    )
    written = [path.name for path in outdir.iterdir() if path.is_file()]
    assert [name for name in written if name in OUTPUTS] == []  # step 1 ran first


def test_a_smaller_tokenizer_whose_model_never_picks_past_it_runs_and_says_zero(
    course_inputs, tmp_path
):
    checkpoints = {
        key: course_shaped(course_inputs, tmp_path / f"{key}.pth", seed, built_never_past=True)
        for key, seed in (("pretrain", 0), ("sft", 1))
    }
    outdir = tmp_path / "out"
    said = ("same.json", "temp.json", "conversation.json")  # the files that count the ids past it
    targets = [str(outdir / name) for name in said]
    snakemake(*targets, *course_args(course_inputs, outdir, **checkpoints))
    assert read(outdir, "same.json")["ids_past_tokenizer"] == 0
    assert read(outdir, "same.json")["run"]["config"]["vocab_size"] == 6400
    temp = read(outdir, "temp.json")
    assert [summary["ids_past_tokenizer"] for summary in temp.values()] == [0] * len(temp)
    turns = read(outdir, "conversation.json")["turns"]
    assert [turn["ids_past_tokenizer"] for turn in turns] == [0] * len(turns)


def test_checkpoint_with_a_nan_weight_stops_naming_it_and_the_tensor(course_inputs, tmp_path):
    state = torch.load(course_inputs["pretrain"], map_location="cpu", weights_only=True)
    state = {key: value.clone() for key, value in state.items()}
    state["model.layers.0.self_attn.q_proj.weight"][0, 0] = float("nan")  # a diverged run
    diverged = tmp_path / "diverged.pth"
    torch.save(state, diverged)
    outdir = tmp_path / "out"
    result = snakemake(
        str(outdir / "same.json"),
        *course_args(course_inputs, outdir, pretrain=diverged),
        check=False,
    )
    assert_failed_cleanly(
        result,
        outdir / "logs" / "cache.log",
        [
            f"config key 'pretrain': {diverged}: weight model.layers.0.self_attn.q_proj.weight "
            "holds 1 NaN of",
            "no figure can be measured",
        ],
        [outdir / "same.json", outdir / "count.json"],
    )


def test_validation_data_with_invalid_utf8_names_the_file_and_line(course_inputs, tmp_path):
    lines = course_inputs["val_data"].read_bytes().splitlines(keepends=True)
    bad = tmp_path / "val_latin1.jsonl"
    bad.write_bytes(
        b"".join([lines[0], '{"text": "café au lait"}\n'.encode("latin-1"), *lines[1:]])
    )
    outdir = tmp_path / "out"
    result = snakemake(
        str(outdir / "same.json"), *course_args(course_inputs, outdir, val_data=bad), check=False
    )
    assert_failed_cleanly(
        result,
        outdir / "logs" / "cache.log",
        [f"{bad} line 2 is not valid UTF-8"],
        [outdir / "same.json", outdir / "count.json"],
    )


def test_model_folder_with_invalid_config_json_names_the_file(course_inputs, tmp_path):
    folder = tmp_path / "converted"  # MiniMind's convert_model.py layout
    folder.mkdir()
    shutil.copy(course_inputs["pretrain"], folder / "pytorch_model.bin")
    (folder / "config.json").write_text('{"model_type": "minimind",', encoding="utf-8")
    outdir = tmp_path / "out"
    result = snakemake(
        str(outdir / "kvbytes.json"),
        *course_args(course_inputs, outdir, pretrain=folder),
        check=False,
    )
    assert_failed_cleanly(
        result,
        outdir / "logs" / "kvbytes.log",
        [f"{folder / 'config.json'} is not valid JSON", "expected a JSON object"],
        [outdir / "kvbytes.json"],
    )


def test_outdir_below_a_regular_file_stops_before_any_job_naming_outdir(course_inputs, tmp_path):
    (tmp_path / "results.txt").write_text("not a folder", encoding="utf-8")
    outdir = tmp_path / "results.txt" / "infer"
    result = snakemake(*course_args(course_inputs, outdir), check=False)
    said = result.stdout + result.stderr
    assert result.returncode != 0
    assert (
        "config key 'outdir'" in said
        and f"{tmp_path / 'results.txt'} is a file, not a folder" in said
    )
    assert "NotADirectoryError" not in said and "Traceback" not in said
    assert "rule " not in said  # no job started
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.txt"]


def test_an_outdir_this_user_cannot_write_stops_before_any_job(course_inputs, immutable_folder):
    outdir = immutable_folder / "mm" / "infer"  # as /root/mm/infer is for a user who is not root
    result = snakemake(*course_args(course_inputs, outdir), check=False)
    said = result.stdout + result.stderr
    assert result.returncode != 0
    assert "config key 'outdir'" in said and f"{immutable_folder} is not writable" in said
    assert "--config outdir=results" in said
    assert "Traceback" not in said and "rule " not in said  # no job started
    dry = snakemake("-n", *course_args(course_inputs, outdir), check=False)
    assert dry.returncode == 0  # a dry run plans the jobs and warns
    assert "A run (without -n) stops here" in dry.stdout + dry.stderr


def test_outdir_with_shell_syntax_runs_nothing(tmp_path):
    marker = tmp_path / "MARKER"
    outdir = tmp_path / f"x $(touch {marker}) `touch {marker}`"
    result = snakemake(
        str(outdir / "cache.py"),
        "--config",
        f"outdir={outdir}",
        f"demo_dir={tmp_path / 'demo'}",
        "demo=always",
        check=False,
    )
    assert not marker.exists()
    assert result.returncode == 0, result.stderr[-3000:]
    assert (outdir / "cache.py").read_bytes() == (REPO / "scripts" / "cache.py").read_bytes()


@pytest.fixture(scope="module")
def jittered_demo_run(tmp_path_factory):
    """The micro demo built and measured on a jittered clock (MMINFER_CLOCK_JITTER, seed 7): every
    timing reads seeded random offsets, so that its verdicts are noisy or untrusted on any machine,
    quiet or busy, and its report meets the sentences a busy laptop gets. Returns (outdir,
    demo_dir)."""
    folder = tmp_path_factory.mktemp("jittered-demo")
    outdir, demo_dir = folder / "out", folder / "demo"
    snakemake(
        *ONE_THREAD,
        "--config",
        f"outdir={outdir}",
        f"demo_dir={demo_dir}",
        "demo=always",
        "backend=builtin",
        env=os.environ | {JITTER_VARIABLE: "7"},
    )
    return outdir, demo_dir


def test_micro_demo_builds_and_measures(jittered_demo_run):
    outdir, demo_dir = jittered_demo_run
    for name in OUTPUTS:
        assert (outdir / name).is_file(), name
    assert read(outdir, "same.json")["run"]["model_set"] == "demo"
    assert "demo" in (outdir / "report.md").read_text(encoding="utf-8")
    assert (demo_dir / "pretrain.pth").is_file() and (demo_dir / "sft.pth").is_file()
    assert "step" in (demo_dir / "logs" / "pretrain.log").read_text(encoding="utf-8")
    latency_is_the_time_jobs_own(outdir)


def claims_of_run(outdir: Path) -> tuple[dict, DecisionLog]:
    """A results folder's records and the claims of its reports, rendered again as the report
    rule renders them (the same text: the claims checked are the ones the run wrote)."""
    records = {entry.name: read_result(outdir / entry.filename) for entry in MEASUREMENTS}
    log = DecisionLog()
    texts = render_reports(
        records,
        pictures={name: picture_file(name) for name in pictures()},
        cache_script="cache.py",
        decisions=log,
        results=str(outdir),
    )
    assert "".join(texts.values()) == both_reports(outdir)
    return records, log


def both_reports(folder: Path) -> str:
    """A results folder's report.md, then its beyond.md."""
    return "".join((folder / name).read_text(encoding="utf-8") for name in REPORTS.values())


def test_a_jittered_run_writes_only_claims_its_records_support(jittered_demo_run):
    outdir, _ = jittered_demo_run
    records, log = claims_of_run(outdir)
    assert denied(records, log) == []
    # Every timing that judges a spread is noisy or untrusted. The conversation's turns are timed
    # once each here (micro.yaml's conversation.runs: 1): one run has no spread, and the jitter
    # can only flip its order, so its verdict is left to the run.
    timings = {
        "time": records["time"].verdict,
        "sweep": records["sweep"].verdict,
        "serve": records["serve"].verdict,
        "repetition": records["repetition"].timing.verdict,
        "batch": records["batch"].timing.verdict,
    }
    assert [name for name, verdict in timings.items() if verdict == "ok"] == []
    assert JITTER_VARIABLE in records["time"].clock
    for report in REPORTS:  # each report's job logs the claims of its own report
        own = DecisionLog()
        render_reports(
            records,
            pictures={name: picture_file(name) for name in pictures()},
            cache_script="cache.py",
            decisions=own,
            results=str(outdir),
            reports=(report,),
        )
        assert own.summary() in (outdir / "logs" / f"{report}.log").read_text(encoding="utf-8")
    # the jitter stretches the wall time the timed runs' CPU time is shared over: a busy machine,
    # said in one line at report.md's top, and its glance marks the row that reads time.json
    assert records["time"].contention.busy
    top, _, glance = (outdir / "report.md").read_text(encoding="utf-8").partition("## 한눈에")
    (line,) = [line for line in top.splitlines() if line.startswith("**바쁜 기계**")]
    assert line.endswith(f"`snakemake --cores 1 {outdir}/report.md -R time`.")
    (row,) = [row for row in glance.splitlines() if row.startswith("| [KV 캐시]")]
    assert "⚠ 바쁜 기계" in row
    assert_checker_passes(outdir)


def assert_checker_passes(outdir: Path) -> None:
    """The shipped checker (python -m mminfer.report.check) finds the reports current (what the
    folder's files render, every decision from their runs), every keyed figure its JSON value and
    every stored decision what its function gives from the runs."""
    result = subprocess.run(
        [sys.executable, "-m", "mminfer.report.check", str(outdir)],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "figures printed under their JSON keys, 0 wrong" in result.stdout
    assert "0 stored decisions part from their runs" in result.stdout


def test_a_quiet_course_run_writes_only_claims_its_records_support(course_run):
    _, outdir = course_run
    records, log = claims_of_run(outdir)
    assert log.written
    assert denied(records, log) == []
    assert_checker_passes(outdir)


def test_lint_is_clean():
    result = run_snakemake(["--lint"], cwd=REPO, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Lints for" not in result.stdout + result.stderr


def test_two_models_get_their_own_folders_and_a_comparison(course_run, variants_run):
    """Models added to a results folder: planned on course_run's, run on variants_run's copy of it
    (its MoE model has a pretrained checkpoint of its own)."""
    args, _ = course_run
    assert planned_jobs(*args, configfiles=(MICRO, variants_run["extra"])) >= {
        "cache",
        "time",
        "kvbytes",
        "temp",
        "topp",
        "report",
        "compare",
    }
    outdir = variants_run["outdir"]
    for name in OUTPUTS:
        assert (outdir / "models" / "moe_untied" / name).is_file(), name
    comparison = (outdir / "comparison.md").read_text(encoding="utf-8")
    assert (
        "| moe_untied |" in comparison
        and "| course |" in comparison
        and "카드당 사용자" in comparison
    )
    checkpoint = read(outdir / "models" / "moe_untied", "same.json")["run"]["checkpoint"]
    assert checkpoint == str(variants_run["moe"])


def test_slurm_profile_plans_jobs_with_their_resources(tmp_path):
    pytest.importorskip("snakemake_executor_plugin_slurm")
    command = [
        "--profile",
        "profiles/slurm",
        "-n",
        "--config",
        f"outdir={tmp_path / 'out'}",
        f"demo_dir={tmp_path / 'demo'}",
        "demo=always",
    ]
    result = run_snakemake(command, cwd=REPO, timeout=120)
    text = result.stdout + result.stderr
    assert result.returncode == 0, text
    time_job = text.split("rule time:")[1].split("\nrule ")[0]
    assert (
        "slurm_extra=--exclusive" in time_job
        and "mem_mb=4000" in time_job
        and "runtime=20" in time_job
    )
    assert "gpu=0" in time_job


def test_html_report_is_built_offline(course_run, tmp_path):
    args, _ = course_run
    html = tmp_path / "report.html"
    snakemake("--report", str(html), *args)
    text = html.read_text(encoding="utf-8", errors="replace")
    assert html.stat().st_size > 10_000 and "kvbytes.json" in text and "beyond.md" in text


def test_bfloat16_run_counts_two_bytes_per_element(course_inputs, tmp_path):
    outdir = tmp_path / "bf16"
    snakemake(
        str(outdir / "kvbytes.json"),
        "--config",
        f"outdir={outdir}",
        f"pretrain={course_inputs['pretrain']}",
        f"sft={course_inputs['sft']}",
        f"val_data={course_inputs['val_data']}",
        f"tokenizer={course_inputs['tokenizer']}",
        "backend=builtin",
        "dtype=bfloat16",
    )
    kv = read(outdir, "kvbytes.json")
    config = course_inputs["config"]
    assert kv["dtype"] == "bfloat16" and kv["bytes_per_element"] == 2
    assert (
        kv["measured_bytes"]
        == kv["formula_bytes"]
        == 2 * config.num_hidden_layers * 20 * 2 * 16 * 2
    )


@pytest.mark.skipif(
    not os.environ.get("MMINFER_FULL_DEMO"),
    reason="the full demo build takes ~1.5 minutes on 2 cores: "
    "MMINFER_FULL_DEMO=1 pytest -k full_demo (scripts/benchmark.py runs the same checks)",
)
def test_full_demo_meets_the_quality_bar(tmp_path):
    from mminfer.demo.corpus import GARAM_VILLAGE
    from mminfer.demo.quality import quality_checks

    outdir, demo_dir = tmp_path / "out", tmp_path / "demo"
    command = [
        sys.executable,
        "-m",
        "snakemake",
        "--cores",
        "2",
        "--config",
        f"outdir={outdir}",
        f"demo_dir={demo_dir}",
        "demo=always",
    ]
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=1200)
    assert result.returncode == 0, result.stderr[-3000:]
    facts = json.loads((demo_dir / "corpus" / "facts.json").read_text(encoding="utf-8"))
    failed = {
        name: check
        for name, check in quality_checks(outdir, facts[GARAM_VILLAGE]).items()
        if not check["ok"]
    }
    assert not failed


@pytest.mark.parametrize("script", ["cache", "time_generation", "kvbytes", "temp", "topp"])
def test_measurement_scripts_run_by_hand_show_help(script):
    result = subprocess.run(
        [sys.executable, str(REPO / "scripts" / f"{script}.py"), "--help"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=60,
    )
    assert result.returncode == 0 and "--backend" in result.stdout


def test_kvbytes_script_by_hand_writes_what_the_rule_wrote(course_run, course_inputs, tmp_path):
    _, outdir = course_run
    out = tmp_path / "kvbytes.json"
    result = subprocess.run(
        [
            sys.executable,
            str(REPO / "scripts" / "kvbytes.py"),
            "--pretrain",
            str(course_inputs["pretrain"]),
            "--out",
            str(out),
            "--tokens",
            "20",
            "--backend",
            "builtin",
            "--threads",
            "1",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    by_hand, by_rule = read(tmp_path, "kvbytes.json"), read(outdir, "kvbytes.json")
    for key in ("tokens", "measured_bytes", "formula_bytes", "k_shape"):
        assert by_hand[key] == by_rule[key]


# --- a shared results folder: a path with a space and Hangul, another umask, a second checkout ----


@pytest.fixture(scope="module")
def two_checkouts(content_run):
    """content_run's results folder, `<tmp>/결과 폴더`, written under umask 027 while a second
    checkout tried the same run."""
    return {**content_run, "root": content_run["shared"]}


def test_outdir_with_a_space_and_hangul_runs_end_to_end(two_checkouts):
    outdir = two_checkouts["outdir"]
    assert two_checkouts["first"].returncode == 0, two_checkouts["first_err"][-3000:]
    for name in OUTPUTS:
        assert (outdir / name).is_file(), name
    assert (outdir / "cache.py").read_bytes() == (REPO / "scripts" / "cache.py").read_bytes()
    assert sorted(p.name for p in two_checkouts["root"].iterdir()) == [
        "결과 폴더"
    ]  # nothing stray beside it


def test_results_follow_another_umask(two_checkouts):
    outdir = two_checkouts["outdir"]
    modes = {name: oct((outdir / name).stat().st_mode & 0o777) for name in OUTPUTS}
    assert modes == {name: oct(0o640) for name in OUTPUTS}


def test_second_checkout_writing_the_same_results_folder_is_refused(two_checkouts):
    second, outdir = two_checkouts["second"], two_checkouts["outdir"]
    said = second.stdout + second.stderr
    assert second.returncode != 0
    assert f"results folder {outdir} (config key 'outdir') is in use by the run started at" in said
    assert f"by pid {two_checkouts['first'].pid} on host" in said and f"from {REPO}" in said
    assert "Finished job" not in said and "Traceback" not in said  # refused before any of its jobs


# --- every kind of MiniMind model, end to end -----------------------------------------------------


def kind_of_model(config: MiniMindConfig, path: Path, seed: int, **settings) -> Path:
    """A random model of ``config`` with the switches, saved as MiniMind's trainers save it."""
    torch.manual_seed(seed)
    model = MiniMindForCausalLM(MiniMindConfig(**{**config.to_dict(), **settings}))
    torch.save({k: v.half() for k, v in model.state_dict().items()}, path)
    return path


@pytest.fixture(scope="module")
def variants_run(course_run, course_inputs, tmp_path_factory):
    """One run measuring every kind of MiniMind model beside the dense one, two kinds to a model:
    a MoE model with an untied head (`moe_untied`), and YaRN with a LoRA on the SFT model
    (`yarn_lora`, the course's checkpoints).

    They join a copy of course_run's results (the same config's): the run adds the two models'
    folders and comparison.md to a results folder that has its first model's files already. Each
    kind also has its exact parity with MiniMind's own model in unit tests (tests/test_variants.py,
    tests/test_knob_parity.py); here each runs through every rule.
    """
    root = tmp_path_factory.mktemp("variants")
    config = course_inputs["config"]
    moe_untied = {"use_moe": True, "num_experts": 3, "tie_word_embeddings": False}
    moe = kind_of_model(config, root / "moe.pth", 1, **moe_untied)
    moe_sft = kind_of_model(config, root / "moe_sft.pth", 2, **moe_untied)
    base = MiniMindForCausalLM(config)  # the LoRA's layers: every square one, as apply_lora picks
    torch.manual_seed(4)
    lora = {}
    for name in apply_lora(base, rank=4):
        lora[f"{name}.lora.A.weight"] = torch.randn(4, config.hidden_size).half() * 0.1
        lora[f"{name}.lora.B.weight"] = torch.randn(config.hidden_size, 4).half() * 0.1
    torch.save(lora, root / "lora.pth")
    models = {
        "moe_untied": {"pretrain": str(moe), "sft": str(moe_sft)},
        "yarn_lora": {
            "pretrain": str(course_inputs["pretrain"]),
            "sft": str(course_inputs["sft"]),
            "sft_lora": str(root / "lora.pth"),
            "model": {"inference_rope_scaling": True},  # this model's own, over config key model
        },
    }
    outdir = root / "out"
    shutil.copytree(course_run[1], outdir)  # with their modification times: nothing to redo
    extra = root / "models.yaml"
    extra.write_text(json.dumps({"models": models}), encoding="utf-8")
    args = course_args(course_inputs, outdir)  # one thread per timing job, as course_run's
    snakemake(*args, configfiles=(MICRO, extra))
    return {
        "outdir": outdir,
        "moe": moe,
        "moe_untied": outdir / "models" / "moe_untied",
        "yarn_lora": outdir / "models" / "yarn_lora",
        "args": args,
        "extra": extra,
        "lora": root / "lora.pth",
    }


@pytest.mark.parametrize("kind", ["moe_untied", "yarn_lora"])
def test_every_kind_of_model_gets_every_output_and_exact_figures(variants_run, kind):
    folder = variants_run[kind]
    assert [name for name in OUTPUTS if not (folder / name).is_file()] == []
    same, count, kv = (
        read(folder, "same.json"),
        read(folder, "count.json"),
        read(folder, "kvbytes.json"),
    )
    assert same["same_ids"] is True
    assert count["fed_with_cache"] == count["formula_with_cache"]
    assert count["fed_without_cache"] == count["formula_without_cache"]
    assert kv["measured_bytes"] == kv["formula_bytes"] == 2 * 2 * 20 * 2 * 16 * 4  # as dense


def test_the_run_block_says_what_kind_of_model_ran(variants_run):
    moe_untied, yarn_lora = variants_run["moe_untied"], variants_run["yarn_lora"]
    moe = read(moe_untied, "kvbytes.json")["run"]
    assert moe["config"]["use_moe"] and moe["config"]["num_experts"] == 3
    assert moe["active_parameters"] < moe["parameters"]
    assert read(moe_untied, "capacity.json")["experts"] == 3
    assert read(moe_untied, "same.json")["run"]["config"]["tie_word_embeddings"] is False
    assert read(variants_run["outdir"], "same.json")["run"]["config"]["tie_word_embeddings"]
    lora = read(yarn_lora, "temp.json")["0.3"]["run"]["lora"]
    assert lora["path"] == str(variants_run["lora"]) and lora["rank"] == 4
    assert read(yarn_lora, "same.json")["run"]["lora"] is None  # the pretrained model has none
    report = both_reports(moe_untied)
    assert (
        "MoE: 층마다 전문가 3개 중 토큰당 1개" in report and "전문가 3개가 모두 메모리에" in report
    )
    assert "LoRA" in (yarn_lora / "report.md").read_text(encoding="utf-8")


def test_yarn_is_measured_and_said(variants_run):
    run = read(variants_run["yarn_lora"], "same.json")["run"]
    assert run["config"]["rope_scaling"]["factor"] == 16
    report = (variants_run["yarn_lora"] / "report.md").read_text(encoding="utf-8")
    assert "RoPE 스케일링: YaRN(factor 16" in report
    assert read(variants_run["outdir"], "same.json")["run"]["config"]["rope_scaling"] is None
    comparison = (variants_run["outdir"] / "comparison.md").read_text(encoding="utf-8")
    assert "| yarn_lora | dense, YaRN, LoRA r4 |" in comparison
    assert "| moe_untied | MoE 1/3, untied |" in comparison and "| course | dense |" in comparison


def test_every_kind_of_model_carries_its_conversation_exactly(variants_run):
    """Issue 24 end to end: the dense model, MoE with an untied head, YaRN with a LoRA hold the
    conversation both
    ways with the tokens fed on their formulas, the answers the same, the saving growing; the
    section renders with its picture and comparison.md has each model's tokens fed."""
    outdir = variants_run["outdir"]
    folders = [outdir, *sorted(path for path in (outdir / "models").iterdir() if path.is_dir())]
    for folder in folders:
        conversation = read(folder, "conversation.json")
        turns = conversation["turns"]
        assert len(turns) >= 3, folder
        assert conversation["totals_match"] and all(turn["fed_match"] for turn in turns), folder
        assert conversation["same_answers"], folder
        reused = [turn["reused"] for turn in turns]
        assert reused == sorted(set(reused)), folder  # the tokens saved grow with the turn
        report = (folder / "beyond.md").read_text(encoding="utf-8")
        assert "## 대화" in report and "](conversation.png)" in report, folder
        assert (folder / "conversation.png").stat().st_size > 0, folder
    comparison = (outdir / "comparison.md").read_text(encoding="utf-8")
    assert "넣은 토큰 (다시 계산 → 캐시 이어 씀)" in comparison
    for folder in folders:
        conversation = read(folder, "conversation.json")
        recompute = f"{conversation['total_fed_recompute']:,}"
        carry = f"{conversation['total_fed_carry']:,}"
        assert f"{recompute} → {carry} (같은 답)" in comparison, folder


def test_a_new_lora_reruns_only_temp_and_what_depends_on_it(variants_run):
    lora = variants_run["lora"]
    original = lora.with_name("lora.pth.orig")
    shutil.copy2(lora, original)
    try:
        state = torch.load(lora, weights_only=True)
        torch.save({k: v * 2 for k, v in state.items()}, lora)
        jobs = planned_jobs(*variants_run["args"], configfiles=(MICRO, variants_run["extra"]))
        assert jobs == jobs_after_new("sft_lora") | {"compare"}
    finally:
        shutil.move(original, lora)


def test_a_model_name_outside_the_results_folder_is_a_config_error(course_inputs, tmp_path):
    models = extra_configfile(
        tmp_path,
        f"models: {{'../../elsewhere': {{pretrain: {course_inputs['pretrain']}, "
        f"sft: {course_inputs['sft']}}}}}\n",
    )
    result = snakemake(
        "-n", *course_args(course_inputs, tmp_path / "out"), configfiles=models, check=False
    )
    said = result.stdout + result.stderr
    assert result.returncode != 0 and "config key 'models.../../elsewhere'" in said
    assert "may not be '.' or '..'" in said
