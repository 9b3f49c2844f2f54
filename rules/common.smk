# Shared by all rules: the validated config, the resolved inputs, path and parameter helpers.
# Decided once, at DAG-build time; nothing here imports torch.
import os
import sys
from pathlib import Path

import yaml
from snakemake.utils import min_version, validate

min_version("9.0")

# The mminfer package sits beside the Snakefile: importable here and in every job's script, with or
# without `pip install -e .` (a conda env or a cluster node has only the dependencies).
REPO = str(Path(workflow.basedir))
sys.path.insert(0, REPO)
# (Set here, not required from the user: so no `envvars:` assertion.)
os.environ.update(PYTHONPATH=os.pathsep.join(p for p in (REPO, os.environ.get("PYTHONPATH")) if p))
ENV = "../envs/mminfer.yaml"

from mminfer.errors import MminferError
from mminfer.inputs import check_config, resolve_inputs

SCHEMA = Path(workflow.basedir) / "schemas" / "config.schema.yaml"

try:
    check_config(config, yaml.safe_load(SCHEMA.read_text(encoding="utf-8")))
    validate(config, str(SCHEMA))  # fills in each key's default
    INPUTS = resolve_inputs(config)
except MminferError as error:
    raise WorkflowError(f"mminfer: {error}")

OUTDIR = Path(config["outdir"])
DEMO_DIR = Path(config["demo_dir"])


def out(name):
    """A file in the results folder."""
    return str(OUTDIR / name)


def logfile(name):
    return str(OUTDIR / "logs" / name)


def demo(name):
    """A file of the embedded demo model."""
    return str(DEMO_DIR / name)


def tokenizer_files():
    folder = Path(INPUTS["tokenizer"])
    return [str(folder / "tokenizer.json"), str(folder / "tokenizer_config.json")]


def model_params():
    """How the scripts load a checkpoint: every config value that changes the model's numbers."""
    return {
        "backend": config["backend"],
        "minimind_src": config["minimind_src"],
        "device": config["device"],
        "dtype": config["dtype"],
        "overrides": dict(config["model"]),
        "model_set": INPUTS["model_set"],
    }


def all_outputs():
    names = ["same.json", "count.json", "time.json", "kvbytes.json", "temp.json", "topp.json",
             "topp_detail.json", "cache.py", "report.md"]
    return [out(name) for name in names]
