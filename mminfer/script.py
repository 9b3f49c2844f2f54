"""What every rule script shares: the job's log and clean errors, and flags for a hand run.

A hand run's flags take their defaults from the schema (schemas/config.schema.yaml, the one home of
every default).
"""

from __future__ import annotations

import argparse
import functools
import json
import logging
import sys
from contextlib import contextmanager
from pathlib import Path

from mminfer.errors import MminferError
from mminfer.inputs import parsed_config, read_schema


@contextmanager
def job_log(log_path):
    """``with job_log(snakemake.log[0]): job(...)``: a job's log, and clean errors.

    The log goes to the file and to stderr; a bad input (MminferError) becomes one logged paragraph
    and exit status 1 instead of a traceback.
    """
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if log_path:
        Path(log_path).parent.mkdir(parents=True, exist_ok=True)
        handlers.append(logging.FileHandler(log_path, mode="w", encoding="utf-8"))
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(name)s %(message)s", handlers=handlers, force=True
    )
    try:
        yield
    except MminferError as exc:
        logging.getLogger("mminfer").error("error: %s", exc)
        sys.exit(1)


@functools.cache
def schema_of(key: str) -> tuple:
    """(default, the values allowed or None) of a dotted config key.

    For example schema_of("cache.docs") == (6, None), schema_of("dtype") == ("float32", [...]).
    """
    value, node = parsed_config(), read_schema()  # no config file: every key at its default
    for part in key.split("."):
        value, node = value[part], node["properties"][part]
    return value, node.get("enum")


def add_flag(parser: argparse.ArgumentParser, name: str, key: str, text: str) -> None:
    """A flag whose type and default are config key ``key``'s in the schema."""
    value, allowed = schema_of(key)
    shown = f"{text} (config key {key}; default {value})"
    if isinstance(value, bool):
        parser.add_argument(name, action=argparse.BooleanOptionalAction, default=value, help=shown)
    elif isinstance(value, dict):
        parser.add_argument(name, type=json.loads, default=value, help=f"{shown}, as JSON")
    elif isinstance(value, list):
        kind = type(value[0])
        parser.add_argument(name, type=kind, nargs="+", default=value, help=shown)
    else:
        kind = str if value is None else type(value)
        parser.add_argument(name, type=kind, default=value, choices=allowed, help=shown)


def cli(doc: str, *flags: tuple) -> argparse.Namespace:
    """Parse a hand run's flags.

    Each flag is (name, config key or None, help): a flag with a config key takes its type and
    default from the schema, one without is a required path.
    """
    parser = argparse.ArgumentParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    for name, key, text in flags:
        if key is None:
            parser.add_argument(name, required=True, help=text)
        else:
            add_flag(parser, name, key, text)
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    parser.add_argument("--log", default=None, help="also write the log to this file")
    return parser.parse_args()


PROMPT_FLAGS = (
    ("--pretrain", None, "pretrained checkpoint (.pth state_dict or model folder)"),
    ("--tokenizer", None, "folder with tokenizer.json and tokenizer_config.json"),
    ("--val-data", None, 'validation JSONL ({"text": ...} per line)'),
    ("--docs", "cache.docs", "documents joined into the prompt"),
    ("--prompt-tokens", "cache.prompt_tokens", "prompt tokens after bos"),
    ("--new-tokens", "cache.new_tokens", "tokens to generate"),
)
MODEL_FLAGS = (
    ("--backend", "backend", "minimind, builtin or auto"),
    ("--minimind-src", "minimind_src", "folder with model/model_minimind.py"),
    ("--device", "device", "auto, cpu or cuda"),
    ("--dtype", "dtype", "float32, bfloat16 or float16"),
    (
        "--model",
        "model",
        "what the checkpoint cannot tell, e.g. '{\"inference_rope_scaling\": true}'",
    ),
)


def tokenizer_folder(files) -> Path:
    """The folder of a rule's tokenizer input (tokenizer.json and tokenizer_config.json)."""
    return Path(files[0]).parent


def hand_arguments(args: argparse.Namespace, *leave: str) -> dict:
    """A job's keyword arguments from a hand run's flags, named like the job's parameters.

    The model flags become the ModelSpec a rule builds from ``params.model``; every other flag is
    passed as given, except --log and the flags in ``leave`` (the script passes those itself).
    """
    from mminfer.loading import ModelSpec  # torch: only once a job runs

    arguments = vars(args).copy()
    fields = {}
    for field in ("backend", "minimind_src", "device", "dtype"):
        fields[field] = arguments.pop(field)
    model = ModelSpec(**fields, overrides=arguments.pop("model"))
    for name in ("log", *leave):
        del arguments[name]
    return arguments | {"model": model}


def rule_only(rule: str, target: str) -> None:
    """A rule script run by hand: say how to run it instead (it has no flags of its own)."""
    sys.exit(
        f"this script is the {rule} rule's and runs inside the workflow only: "
        f"snakemake --cores 2 <outdir>/{target} (the task's scripts, cache.py, "
        "time_generation.py, kvbytes.py, temperature.py and topp.py, also run by hand)"
    )
