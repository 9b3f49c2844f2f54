"""The config and the inputs it names, decided once when Snakemake builds the DAG.

Is the config valid (:func:`check_config`, against schemas/config.schema.yaml, the one home of every
key and its default)? Which model sets do the rules read: the configured course inputs or the
embedded demo, and each model of config key ``models`` (:func:`resolve_runs`)? A message names an
input by mminfer.errors.input_source. Imports nothing heavy (no torch).
"""

from __future__ import annotations

import copy
import os
import re
from pathlib import Path

from mminfer.errors import MminferError

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "schemas" / "config.schema.yaml"

INPUT_KEYS = ("pretrain", "sft", "val_data", "tokenizer")
BOUNDS = {"minimum": ">=", "exclusiveMinimum": ">", "maximum": "<=", "exclusiveMaximum": "<"}
MODEL_NAME = re.compile(r"[\w.-]+")  # letters (any script), digits, '_', '-', '.'


# --- the config check ----------------------------------------------------------------------------


def read_schema() -> dict:
    import yaml

    return yaml.safe_load(SCHEMA_PATH.read_text(encoding="utf-8"))


def allowed_values(error) -> str:
    """What a key may hold, for the message of an enum or bound violation."""
    rule, parent = error.validator, error.schema
    if rule == "enum":
        return f"; allowed: {', '.join(map(str, error.validator_value))}"
    if rule in BOUNDS and "exclusiveMinimum" in parent and "maximum" in parent:
        return f"; allowed: ({parent['exclusiveMinimum']}, {parent['maximum']}]"
    if rule in BOUNDS:
        return f"; allowed: {BOUNDS[rule]} {error.validator_value}"
    return ""


def config_errors(config: dict, schema: dict) -> list[str]:
    """Every schema violation, each as "config key 'a.b.0': what is wrong"."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(config), key=lambda e: list(map(str, e.absolute_path)))
    messages = []
    for error in errors:
        key = ".".join(str(part) for part in error.absolute_path) or "(top level)"
        messages.append(f"config key '{key}': {error.message}{allowed_values(error)}")
    for name in config.get("models") or {}:
        if not MODEL_NAME.fullmatch(name) or name in (".", ".."):
            messages.append(
                f"config key 'models.{name}': a model name may hold only letters, digits, '-', "
                "'_' and '.', and may not be '.' or '..' (it names the folder outdir/models/<name>)"
            )
    return messages


def fill_defaults(config: dict, schema: dict) -> dict:
    """Add the schema's default for every missing key, in nested sections too (in place).

    The keys then stand in the schema's order, so that a section a rule takes whole (its params)
    is the same however a config file orders it: reordering keys reruns nothing.
    """
    properties = schema.get("properties", {})
    for key, entry in properties.items():
        if key not in config and "default" in entry:
            config[key] = copy.deepcopy(entry["default"])
        if isinstance(config.get(key), dict) and "properties" in entry:
            fill_defaults(config[key], entry)
    for key in properties:
        if key in config:
            config[key] = config.pop(key)  # to the end, in the schema's order
    return config


def check_config(config: dict, schema: dict | None = None) -> dict:
    """The one config check: fill in the schema's defaults, then one message per bad key."""
    if schema is None:
        schema = read_schema()
    errors = config_errors(fill_defaults(config, schema), schema)
    if errors:
        raise MminferError("invalid configuration:\n  " + "\n  ".join(errors))
    return config


def merged(into: dict, update: dict) -> dict:
    """``update`` merged into ``into`` key by key, sections recursively (in place)."""
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            merged(into[key], value)
        else:
            into[key] = value
    return into


def parsed_config(*paths) -> dict:
    """The checked config the workflow would see for these config files (later ones win)."""
    import yaml

    config: dict = {}
    for path in paths:
        merged(config, yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {})
    return check_config(config)


def model_params(config: dict, model_set: str) -> dict:
    """A rule's ``params.model``: the fields of loading.ModelSpec.

    Every config value that changes the numbers. The demo's .pth carries no config: it loads with
    the rotary table length it was built with. A model of config key models takes config key
    model, then its own ``model`` over it.
    """
    overrides = {}
    if model_set == "demo":
        overrides["max_position_embeddings"] = config["demo_model"]["max_position_embeddings"]
    overrides |= config["model"]
    entry = (config.get("models") or {}).get(model_set)
    if entry is not None:  # a model of config key models: its own `model` over the task's
        overrides |= entry.get("model") or {}
    return {
        "backend": config["backend"],
        "minimind_src": config["minimind_src"],
        "device": config["device"],
        "dtype": config["dtype"],
        "overrides": overrides,
        "model_set": model_set,
    }


# --- which inputs the rules read -----------------------------------------------------------------


def demo_paths(demo_dir: str | Path) -> dict[str, str]:
    """Where the embedded demo's rules write the four inputs."""
    files = {
        "pretrain": "pretrain.pth",
        "sft": "sft.pth",
        "val_data": "corpus/pretrain_val.jsonl",
        "tokenizer": "tokenizer",
    }
    return {key: str(Path(demo_dir) / name) for key, name in files.items()}


def existing_lora(value, key: str) -> str | None:
    """A LoRA file named by config key ``key``, which must exist; None when the key is unset."""
    if not value:
        return None
    if not Path(value).is_file():
        raise MminferError(f"config key '{key}': {value} does not exist (a LoRA file expected).")
    return str(value)


def resolve_inputs(config: dict) -> dict:
    """The task model's inputs: {"model_set": "course" or "demo", "pretrain": ..., ...}.

    With demo=auto: the configured inputs when all exist, the demo when none do, an error when only
    some do (never mixed); demo=always and demo=never force either way. The SFT model's LoRA (config
    key sft_lora) is the user's file in both cases.
    """
    mode = config.get("demo", "auto")
    configured = {key: str(config[key]) for key in INPUT_KEYS}
    present = [key for key in INPUT_KEYS if Path(configured[key]).exists()]
    missing = [key for key in INPUT_KEYS if key not in present]
    lora = {"sft_lora": existing_lora(config.get("sft_lora"), "sft_lora")}
    if mode == "always" or (mode == "auto" and not present):
        demo = demo_paths(config.get("demo_dir", "resources/demo"))
        return {"model_set": "demo", **demo, **lora}
    if missing:
        listed = "; ".join(
            f"config key '{key}': {configured[key]} does not exist" for key in missing
        )
        if mode == "never":
            raise MminferError(f"demo is 'never' but inputs are missing — {listed}.")
        raise MminferError(
            f"some configured inputs exist and some do not — {listed}. Fix those paths, or set "
            "config key 'demo' to 'always' to use the embedded demo model instead (course and "
            "demo files are never mixed)."
        )
    tokenizer = Path(configured["tokenizer"])
    for name in ("tokenizer.json", "tokenizer_config.json"):
        if not (tokenizer / name).is_file():
            raise MminferError(f"config key 'tokenizer': {tokenizer} has no {name}.")
    return {"model_set": "course", **configured, **lora}


def resolve_model(name: str, entry: dict, main: dict) -> dict:
    """The inputs of one model of config key ``models``.

    Every path must exist; tokenizer and val_data default to the task model's.
    """
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
    resolved["sft_lora"] = existing_lora(entry.get("sft_lora"), f"models.{name}.sft_lora")
    return resolved


def resolve_runs(config: dict) -> tuple[dict[str, dict], list[str]]:
    """(results folder -> its inputs, why this user cannot write a folder the run writes into).

    The task's model writes into `outdir` itself, each model of config key 'models' into
    `outdir/models/<name>`. Each of these folders, and `demo_dir` where the demo is built, goes
    through :func:`check_folder_can_exist`: a file in the way stops here; a folder this user
    cannot write is returned, for the workflow to stop a real run before any job and to warn in a
    dry run (once per folder: not again for the folders below one already named).
    """
    outdir = Path(config["outdir"])
    main = resolve_inputs(config)
    runs = {str(outdir): main}
    # folder -> (how a message names it, the config key that moves it)
    folders = {str(outdir): ("config key 'outdir'", "outdir")}
    for name, entry in (config.get("models") or {}).items():
        folder = str(outdir / "models" / name)
        runs[folder] = resolve_model(name, entry, main)
        folders[folder] = (f"the results folder of config key 'models.{name}'", "outdir")
    if any(run["model_set"] == "demo" for run in runs.values()):
        demo_dir = str(config.get("demo_dir", "resources/demo"))
        folders[demo_dir] = ("config key 'demo_dir'", "demo_dir")
    refused = []
    problems = []
    for folder, (named, key) in folders.items():
        problem = check_folder_can_exist(folder, named, key)
        if problem is None:
            continue
        if any(Path(folder).is_relative_to(above) for above in refused):
            continue  # below a folder already named: the same way out
        refused.append(Path(folder))
        problems.append(problem)
    return runs, problems


def check_folder_can_exist(folder: str | Path, named: str, key: str) -> str | None:
    """Stop when a file is in the way of ``folder``; else why this user cannot write it, or None.

    One walk up from ``folder`` to the nearest folder that exists (the folder itself, or the
    parent it would be made in; a path this user may not look into counts as absent: /root/mm as
    seen by another user). A file met first stops here (otherwise Snakemake would stop in a
    NotADirectoryError after planning the jobs). That folder must let this user write into it: a
    person who is not root cannot write the task's default, /root/mm/infer; the message says which
    config key (``key``) to change, and how.
    """
    folder = Path(folder)
    for candidate in (folder, *folder.parents):
        if os.path.isdir(candidate):
            if os.access(candidate, os.W_OK | os.X_OK):
                return None
            if candidate == folder:
                why = "it is not writable"
            else:
                why = f"{candidate} is not writable, so it cannot be created"
            return (
                f"{named}: this user ({user_name()}) cannot write the folder {folder}: {why}. "
                f"Choose a folder you can write, e.g. `snakemake --cores 2 --config {key}=results` "
                f"(the folder results/ where you run snakemake), or set {key} in config.yaml."
            )
        if os.path.lexists(candidate):
            below = ""
            if candidate != folder:
                below = f", so {folder} cannot be created below it"
            raise MminferError(
                f"{named}: {candidate} is a file, not a folder{below}. Choose a folder path."
            )
    return None


def user_name() -> str:
    """The user this process runs as, for a message: the name of its uid, else the uid."""
    import pwd

    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:  # no name for the uid (a container's random uid)
        return f"uid {os.getuid()}"
