"""Every config key's dry-run rerun set on a finished run of the course-like inputs.

For each leaf key of schemas/config.schema.yaml that a measurement reads (not the input paths,
outdir, the model's shape or the demo's training), a dry run with that one key changed lists the
rules it would run again. Written as JSON (key -> sorted rule names, "error" for a value the
config check refuses): run on two trees, the tables must be equal. tests/data/rerun_sets.json is
77d9d50's table (before the package moved into folders) but for two keys that reran too little
there: time.warmup and latency.cost_rounds now rerun the time job (rules/common.smk, `named`);
and remedies and lookup, new since, rerun on the keys they read (cache's prompt, time's rounds);
since report.md and beyond.md are two rules (issue 57), beyond reruns with every measurement and
report only with the task's rules (cache, time, kvbytes, temp, topp).
tests/test_workflow.py checks a sample of its keys on every run of the suite, this script all of
them (about 4 minutes).

    PYTHONPATH=.:tests python tests/rerun_sets.py OUT.json
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
MICRO = REPO / "tests" / "data" / "micro.yaml"  # the end-to-end runs' settings
TABLE = REPO / "tests" / "data" / "rerun_sets.json"
SKIPPED = ("outdir", "pretrain", "sft", "sft_lora", "val_data", "tokenizer", "minimind_src")
SKIPPED += ("models", "demo", "demo_dir", "backend", "device", "dtype", "model.", "demo_model.")


def leaves(node: dict, path: str = ""):
    """(dotted key, schema entry) of every leaf key."""
    properties = node.get("properties")
    if properties and node.get("type") == "object":
        for key, entry in properties.items():
            yield from leaves(entry, f"{path}.{key}" if path else key)
    else:
        yield path, node


def current(config: dict, key: str):
    value = config
    for part in key.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def changed(entry: dict, value):
    """Another valid-looking value of the key's type."""
    kind = entry.get("type")
    if "enum" in entry:
        others = [option for option in entry["enum"] if option != value]
        return others[0]
    if isinstance(value, bool) or kind == "boolean":
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value * 1.5
    if isinstance(value, str):
        return value + " 다시"
    if isinstance(value, list):
        return value[:-1] if len(value) > 1 else value + value
    if value is None:
        return 1
    raise ValueError(f"no changed value for {value!r}")


def nested(key: str, value) -> dict:
    result = value
    for part in reversed(key.split(".")):
        result = {part: result}
    return result


def schema() -> dict:
    return yaml.safe_load((REPO / "schemas" / "config.schema.yaml").read_text(encoding="utf-8"))


def changeable_keys() -> list[str]:
    """The leaf keys a measurement reads, in the schema's order."""
    keys = [key for key, _ in leaves(schema())]
    return [key for key in keys if not (key in SKIPPED or key.startswith(SKIPPED))]


def changed_config(key: str) -> str:
    """A config file that changes ``key`` from its value in the end-to-end runs (micro.yaml over
    the schema's defaults)."""
    entries = dict(leaves(schema()))
    value = current(yaml.safe_load(MICRO.read_text(encoding="utf-8")), key)
    if value is None:
        value = entries[key].get("default")
    return yaml.safe_dump(nested(key, changed(entries[key], value)), allow_unicode=True)


def main(out: str) -> None:
    import test_workflow as wf  # the end-to-end tests' helpers: inputs, the run, the dry run

    root = Path(tempfile.mkdtemp())

    class Factory:  # tmp_path_factory's one method the fixtures call
        def mktemp(self, name):
            path = root / name
            path.mkdir()
            return path

    inputs = wf.course_inputs.__wrapped__(Factory())
    args, _outdir = wf.course_run.__wrapped__(inputs, Factory())
    table = {}
    for key in changeable_keys():
        extra = root / f"{key}.yaml"
        extra.write_text(changed_config(key), encoding="utf-8")
        result = wf.snakemake("-n", *args, configfiles=(wf.MICRO, extra), check=False)
        if result.returncode != 0:
            table[key] = "error"
        else:
            table[key] = sorted(wf.jobs_in(result.stdout + result.stderr))
        print(key, table[key], flush=True)
    Path(out).write_text(table_text(table), encoding="utf-8")


def table_text(table: dict) -> str:
    """The table as JSON, one key a line."""
    rows = [
        f" {json.dumps(key)}: {json.dumps(jobs, ensure_ascii=False)}" for key, jobs in table.items()
    ]
    return "{\n" + ",\n".join(rows) + "\n}\n"


if __name__ == "__main__":
    main(sys.argv[1])
