"""What every rule script shares: the job's log and clean errors, and flags for a hand run.

A rule script ends with two adapters, each naming every argument of its one function. The rule's,
under ``if "snakemake" in globals():``, opens ``job_log(snakemake.log[0])`` and reads
``snakemake.input``, ``.params`` and ``.output`` by name (:func:`rule_model` and
:func:`rule_prompt` build the model and the task's prompt from the rule's fields of those names).
The hand run's, under ``elif __name__ == "__main__":``, reads the flags :func:`cli` parses
(:func:`hand_model`, :func:`hand_prompt`), whose defaults come from the schema
(schemas/config.schema.yaml, the one home of every default).
"""

from __future__ import annotations

import argparse
import copy
import functools
import json
import logging
import sys
from contextlib import contextmanager
from pathlib import Path

from mminfer.errors import MminferError
from mminfer.records import PretrainPrompt
from mminfer.workflow.inputs import parsed_config, read_schema


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
def defaults_and_schema() -> tuple[dict, dict]:
    """The config with no config file (every key at its default) and the schema, read once a
    process: a hand run's flags take a dozen keys, and each read costs a fifth of a second."""
    return parsed_config(), read_schema()


def schema_of(key: str) -> tuple:
    """(default, the values allowed or None, description) of a dotted config key.

    For example, schema_of("cache.docs") is (6, None, "Validation documents joined with spaces
    into the prompt.").
    """
    value, node = defaults_and_schema()
    for part in key.split("."):
        value, node = value[part], node["properties"][part]
    return copy.deepcopy(value), node.get("enum"), node.get("description", "")


def section_keys(*sections: str, without: tuple[str, ...] = ()) -> list[str]:
    """Every dotted key of config ``sections``, in the schema's order, but those ``without``.

    For example, section_keys("kvbytes") is ["kvbytes.tokens", "kvbytes.seed"].
    """
    _, schema = defaults_and_schema()
    keys = []
    for section in sections:
        for key in schema["properties"][section]["properties"]:
            keys.append(f"{section}.{key}")
    return [key for key in keys if key not in without]


def add_setting(parser: argparse.ArgumentParser, key: str) -> None:
    """A flag for config key ``key``: named after its last part, with the schema's type, default
    and description (``cache.new_tokens`` -> ``--new-tokens``)."""
    name = "--" + key.split(".")[-1].replace("_", "-")
    value, allowed, description = schema_of(key)
    shown = f"{description} (config key {key}; default {value})".replace("%", "%%")  # argparse
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


def cli(
    doc: str,
    paths: list[tuple[str, str]],
    keys: list[str],
    optional_paths: list[tuple[str, str]] = (),
) -> argparse.Namespace:
    """Parse a hand run's flags.

    ``paths``: (flag, help) of the files the job reads and writes, all required (those of
    ``optional_paths`` may be left out, then None); ``keys``: the
    config keys it takes, each a flag (see add_setting), followed by those of the model it opens
    (MODEL_KEYS), --threads and --log.
    """
    parser = argparse.ArgumentParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    for name, text in paths:
        parser.add_argument(name, required=True, help=text)
    for name, text in optional_paths:
        parser.add_argument(name, default=None, help=text)
    for key in [*keys, *MODEL_KEYS]:
        add_setting(parser, key)
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    parser.add_argument("--log", default=None, help="also write the log to this file")
    return parser.parse_args()


# The files of a hand run, each a required flag.
PRETRAIN = ("--pretrain", "pretrained checkpoint (.pth state_dict or model folder)")
SFT = ("--sft", "SFT checkpoint (.pth state_dict or model folder)")
TOKENIZER = ("--tokenizer", "folder with tokenizer.json and tokenizer_config.json")
VAL_DATA = ("--val-data", 'validation JSONL ({"text": ...} per line)')

# The files and config keys of the task's greedy prompt.
PROMPT_FILES = [PRETRAIN, TOKENIZER, VAL_DATA]
PROMPT_KEYS = ["cache.docs", "cache.prompt_tokens", "cache.new_tokens"]

# The config keys of the model a job opens: every hand run has them.
MODEL_KEYS = ["backend", "minimind_src", "device", "dtype", "model"]


def tokenizer_folder(files) -> str:
    """The folder of a rule's tokenizer input (tokenizer.json and tokenizer_config.json)."""
    return str(Path(files[0]).parent)


def hand_model(args: argparse.Namespace, checkpoint: str, input_key: str = "pretrain", lora=None):
    """The ModelSource of a hand run: ``checkpoint`` opened as its model flags and --threads say.

    The model flags (MODEL_KEYS) become the ModelSpec a rule builds from ``params.model``.
    """
    # torch: the report and compare scripts import this module and never open a model
    from mminfer.model.loading import ModelSource, ModelSpec

    spec = ModelSpec(
        backend=args.backend,
        minimind_src=args.minimind_src,
        device=args.device,
        dtype=args.dtype,
        overrides=args.model,
    )
    return ModelSource(
        checkpoint=checkpoint,
        spec=spec,
        threads=args.threads,
        input_key=input_key,
        lora=lora,
    )


def hand_prompt(args: argparse.Namespace):
    """The task prompt of a hand run: from --tokenizer, --val-data, --docs and --prompt-tokens."""
    return PretrainPrompt(
        tokenizer=args.tokenizer,
        val_data=args.val_data,
        docs=args.docs,
        prompt_tokens=args.prompt_tokens,
    )


def rule_only(rule: str, target: str) -> None:
    """A rule script run by hand: say how to run it instead (it has no flags of its own)."""
    sys.exit(
        f"this script is the {rule} rule's and runs inside the workflow only: "
        f"snakemake --cores 2 <outdir>/{target} (the task's scripts, cache.py, "
        "time_generation.py, kvbytes.py, temp.py and topp.py, also run by hand)"
    )


def rule_prompt(snakemake) -> PretrainPrompt:
    """The task prompt of a rule: its tokenizer and validation inputs, params docs and
    prompt_tokens (the rule's own spelling of :func:`hand_prompt`)."""
    return PretrainPrompt(
        tokenizer=tokenizer_folder(snakemake.input.tokenizer),
        val_data=snakemake.input.val_data,
        docs=snakemake.params.docs,
        prompt_tokens=snakemake.params.prompt_tokens,
    )


def rule_model(snakemake, input_key: str = "pretrain"):
    """The ModelSource of a rule: its input ``input_key`` (the SFT model with its LoRA, an empty
    input for none), opened as ``params.model`` says, on the rule's threads: a timing rule's
    ``params.torch_threads`` (time.threads, else the job's: rules/common.smk decides), any other
    rule's job threads.
    """
    # torch: the report and compare scripts import this module and never open a model
    from mminfer.model.loading import ModelSource, ModelSpec

    lora = None
    if input_key == "sft":
        lora = snakemake.input.sft_lora or None  # none: an empty input
    threads = getattr(snakemake.params, "torch_threads", None) or snakemake.threads
    return ModelSource(
        checkpoint=getattr(snakemake.input, input_key),
        spec=ModelSpec(**snakemake.params.model),
        threads=threads,
        input_key=input_key,
        lora=lora,
    )
