"""What every rule script shares: logging to the rule's log file and turning errors into a clear
one-paragraph message with a non-zero exit."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from mminfer.errors import MminferError


def setup_logging(log_path: str | Path | None) -> None:
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if log_path:
        Path(log_path).parent.mkdir(parents=True, exist_ok=True)
        handlers.append(logging.FileHandler(log_path, mode="w", encoding="utf-8"))
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s", handlers=handlers,
                        force=True)


def run_job(log_path, job, *args, **kwargs):
    """Call ``job(*args, **kwargs)`` with logging to ``log_path``; exit 1 with the message on an
    MminferError (bad input), so the user sees one paragraph instead of a traceback."""
    setup_logging(log_path)
    try:
        return job(*args, **kwargs)
    except MminferError as exc:
        logging.getLogger("mminfer").error("error: %s", exc)
        sys.exit(1)


def add_prompt_arguments(parser) -> None:
    """The flags of the task's greedy prompt: checkpoint, tokenizer, validation data and sizes."""
    parser.add_argument("--pretrain", required=True, help="pretrained checkpoint (.pth state_dict or model folder)")
    parser.add_argument("--tokenizer", required=True, help="folder with tokenizer.json and tokenizer_config.json")
    parser.add_argument("--val-data", required=True, help="validation JSONL ({\"text\": ...} per line)")
    parser.add_argument("--docs", type=int, default=6, help="documents joined into the prompt (default 6)")
    parser.add_argument("--prompt-tokens", type=int, default=200, help="prompt tokens after bos (default 200)")
    parser.add_argument("--new-tokens", type=int, default=64, help="tokens to generate (default 64)")


def add_model_arguments(parser) -> None:
    """The flags that choose and place a model, for running a rule script by hand."""
    parser.add_argument("--backend", default="auto", choices=["auto", "minimind", "builtin"])
    parser.add_argument("--minimind-src", default="/opt/minimind", help="folder with model/model_minimind.py")
    parser.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"])
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    parser.add_argument("--log", default=None, help="also write the log to this file")


def model_params_from_args(args) -> dict:
    """The same dict a rule passes as ``params.model``."""
    return {"backend": args.backend, "minimind_src": args.minimind_src, "device": args.device,
            "dtype": args.dtype, "overrides": {}, "model_set": "custom"}
