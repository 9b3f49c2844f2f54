"""Decisions made once, when Snakemake builds the DAG: is the config valid, and which model set (the
configured course inputs or the embedded demo) do the rules read? Imports nothing heavy (no torch).
"""

from __future__ import annotations

import copy
import os
from pathlib import Path

from mminfer.errors import MminferError

SCHEMA_PATH = (
    Path(__file__).resolve().parents[1] / "schemas" / "config.schema.yaml"
)  # every key and its default

INPUT_KEYS = ("pretrain", "sft", "val_data", "tokenizer")
BOUNDS = {"minimum": ">=", "exclusiveMinimum": ">", "maximum": "<=", "exclusiveMaximum": "<"}


def config_errors(config: dict, schema: dict) -> list[str]:
    """Every schema violation, each as "config key 'a.b.0': what is wrong"."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema)
    messages = []
    for error in sorted(
        validator.iter_errors(config), key=lambda e: list(map(str, e.absolute_path))
    ):
        key = ".".join(str(part) for part in error.absolute_path) or "(top level)"
        allowed, rule, parent = "", error.validator, error.schema
        if rule == "enum":
            allowed = f"; allowed: {', '.join(map(str, error.validator_value))}"
        elif rule in BOUNDS and "exclusiveMinimum" in parent and "maximum" in parent:
            allowed = f"; allowed: ({parent['exclusiveMinimum']}, {parent['maximum']}]"
        elif rule in BOUNDS:
            allowed = f"; allowed: {BOUNDS[rule]} {error.validator_value}"
        messages.append(f"config key '{key}': {error.message}{allowed}")
    return messages


def fill_defaults(config: dict, schema: dict) -> dict:
    """Add the schema's default for every missing key, in nested sections too (in place)."""
    for key, entry in schema.get("properties", {}).items():
        if key not in config and "default" in entry:
            config[key] = copy.deepcopy(entry["default"])
        if isinstance(config.get(key), dict) and "properties" in entry:
            fill_defaults(config[key], entry)
    return config


def check_config(config: dict, schema: dict | None = None) -> dict:
    """The one config check: fill in the schema's defaults, then one message per bad key (``schema``:
    default schemas/config.schema.yaml)."""
    if schema is None:
        import yaml

        schema = yaml.safe_load(SCHEMA_PATH.read_text(encoding="utf-8"))
    errors = config_errors(fill_defaults(config, schema), schema)
    if errors:
        raise MminferError("invalid configuration:\n  " + "\n  ".join(errors))
    return config


def model_params(config: dict, model_set: str) -> dict:
    """A rule's ``params.model`` (the fields of loading.ModelSpec): every config value that changes the numbers.
    The demo's .pth carries no config: it loads with the rotary table length it was built with."""
    demo = {"max_position_embeddings": config["demo_model"]["max_position_embeddings"]}
    overrides = {**(demo if model_set == "demo" else {}), **config["model"]}
    return {
        "backend": config["backend"],
        "minimind_src": config["minimind_src"],
        "device": config["device"],
        "dtype": config["dtype"],
        "overrides": overrides,
        "model_set": model_set,
    }


def parsed_config(*paths) -> dict:
    """The checked config the workflow would see for these config files (later ones win, key by key)."""
    import yaml

    def merge(into: dict, update: dict) -> dict:
        for key, value in update.items():
            into[key] = (
                merge(into[key], value)
                if isinstance(value, dict) and isinstance(into.get(key), dict)
                else value
            )
        return into

    config: dict = {}
    for path in paths:
        merge(config, yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {})
    return check_config(config)


def demo_paths(demo_dir: str | Path) -> dict[str, str]:
    """Where the embedded demo's rules write the four inputs."""
    files = {
        "pretrain": "pretrain.pth",
        "sft": "sft.pth",
        "val_data": "corpus/pretrain_val.jsonl",
        "tokenizer": "tokenizer",
    }
    return {key: str(Path(demo_dir) / name) for key, name in files.items()}


def resolve_inputs(config: dict) -> dict:
    """{"model_set": "course"|"demo", "pretrain": ..., ...}. demo=auto: the configured inputs when all exist,
    the demo when none do, an error when only some do (never mixed); demo=always / never force either way."""
    mode = config.get("demo", "auto")
    configured = {key: str(config[key]) for key in INPUT_KEYS}
    present = [key for key in INPUT_KEYS if Path(configured[key]).exists()]
    missing = [key for key in INPUT_KEYS if key not in present]
    if mode == "always" or (mode == "auto" and not present):
        return {"model_set": "demo", **demo_paths(config.get("demo_dir", "resources/demo"))}
    if missing:
        listed = "; ".join(
            f"config key '{key}': {configured[key]} does not exist" for key in missing
        )
        if mode == "never":
            raise MminferError(f"demo is 'never' but inputs are missing — {listed}.")
        raise MminferError(
            f"some configured inputs exist and some do not — {listed}. Fix those paths, or set config "
            f"key 'demo' to 'always' to use the embedded demo model instead (course and demo files are "
            f"never mixed)."
        )
    tokenizer = Path(configured["tokenizer"])
    for name in ("tokenizer.json", "tokenizer_config.json"):
        if not (tokenizer / name).is_file():
            raise MminferError(f"config key 'tokenizer': {tokenizer} has no {name}.")
    return {"model_set": "course", **configured}


def resolve_runs(config: dict) -> dict[str, dict]:
    """Results folder -> its inputs: the task's single model in `outdir` itself, each model of config key
    'models' in `outdir/models/<name>` (every path must exist; tokenizer and val_data default to the task's)."""
    outdir = Path(config["outdir"])
    main = resolve_inputs(config)
    runs = {str(outdir): main}
    folders = {str(outdir): "config key 'outdir'"}
    for name, entry in (config.get("models") or {}).items():
        resolved = {"model_set": name}
        for key in INPUT_KEYS:
            value = entry.get(key)
            if not value and key in ("tokenizer", "val_data"):
                resolved[key] = main[key]
            elif not value:
                raise MminferError(f"config key 'models.{name}.{key}' is required.")
            elif not Path(value).exists():
                raise MminferError(f"config key 'models.{name}.{key}': {value} does not exist.")
            else:
                resolved[key] = str(value)
        runs[str(outdir / "models" / name)] = resolved
        folders[str(outdir / "models" / name)] = f"the results folder of config key 'models.{name}'"
    if any(run["model_set"] == "demo" for run in runs.values()):
        folders[str(config.get("demo_dir", "resources/demo"))] = "config key 'demo_dir'"
    for folder, named in folders.items():
        check_folder_can_exist(folder, named)
    return runs


def check_folder_can_exist(folder: str | Path, named: str) -> None:
    """No file in the way of ``folder``; else Snakemake stops in a NotADirectoryError after planning the jobs."""
    folder = Path(folder)
    for candidate in (folder, *folder.parents):
        if os.path.isdir(candidate):
            return
        if os.path.lexists(candidate):
            below = "" if candidate == folder else f", so {folder} cannot be created below it"
            raise MminferError(
                f"{named}: {candidate} is a file, not a folder{below}. Choose a folder path."
            )


def input_source(model_set: str, key: str, path) -> str:
    """Where the user set input ``key`` of a model set, for an error message: a config key, the
    demo's folder, or a flag of a script run by hand (model set "custom")."""
    if model_set == "custom":
        return f"--{key.replace('_', '-')}: {path}"
    if model_set == "demo":
        return f"the demo's {key}, built under config key 'demo_dir': {path}"
    if model_set == "course":
        return f"config key '{key}': {path}"
    default = f" (default: '{key}')" if key in ("tokenizer", "val_data") else ""
    return f"config key 'models.{model_set}.{key}'{default}: {path}"
