"""What every rule script shares: the job's log and clean errors (:func:`job_log`), and, for a
run by hand, flags whose defaults are the schema's (schemas/config.schema.yaml, the one home of
every default)."""

from __future__ import annotations

import argparse
import functools
import logging
import sys
from contextlib import contextmanager
from pathlib import Path

from mminfer.errors import MminferError
from mminfer.inputs import SCHEMA_PATH, parsed_config


@contextmanager
def job_log(log_path):
    """``with job_log(snakemake.log[0]): job(...)``: log to the file (and stderr); a bad input
    (MminferError) becomes one logged paragraph and exit status 1 instead of a traceback."""
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
    """(default, the values allowed or None) of a dotted config key, e.g. schema_of("cache.docs") == (6, None)."""
    import yaml

    value, node = parsed_config(), yaml.safe_load(SCHEMA_PATH.read_text(encoding="utf-8"))
    for part in key.split("."):  # parsed_config(): no config file, so every key at its default
        value, node = value[part], node["properties"][part]
    return value, node.get("enum")


def cli(doc: str, *flags: tuple) -> argparse.Namespace:
    """Parse a hand run's flags. Each flag is (name, config key or None, help); a flag with a config key
    takes its type and default from the schema, one without is a required path."""
    parser = argparse.ArgumentParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    for name, key, text in flags:
        if key is None:
            parser.add_argument(name, required=True, help=text)
            continue
        value, allowed = schema_of(key)
        many = isinstance(value, list)
        kind = type(value[0] if many else value) if value is not None else str
        parser.add_argument(
            name,
            type=kind,
            nargs="+" if many else None,
            default=value,
            choices=allowed,
            help=f"{text} (config key {key}; default {value})",
        )
    parser.add_argument(
        "--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)"
    )
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
)


def tokenizer_folder(files) -> Path:
    """The folder of a rule's tokenizer input (tokenizer.json and tokenizer_config.json)."""
    return Path(files[0]).parent


def hand_arguments(args: argparse.Namespace, *leave: str) -> dict:
    """A job's keyword arguments from a hand run's flags, which are named like the job's parameters: the
    model flags as the ModelSpec a rule builds from ``params.model``, every other flag as given, except
    --log and the flags in ``leave`` (the script passes those itself)."""
    from mminfer.loading import ModelSpec  # torch: only once a job runs

    arguments = vars(args).copy()
    model = ModelSpec(
        **{field: arguments.pop(field) for field in ("backend", "minimind_src", "device", "dtype")}
    )
    for name in ("log", *leave):
        del arguments[name]
    return arguments | {"model": model}
