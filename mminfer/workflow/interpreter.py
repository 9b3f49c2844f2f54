"""The Python Snakemake runs each rule's script with: a path its shell must take unquoted.

Snakemake starts a ``script:`` as ``<sys.executable> '<script>'`` and quotes only the script
(snakemake/snakemake#2645, open in 9.x): where the interpreter's path holds a space, as a virtual
environment made inside a clone under ``My Projects/`` does, the shell splits it and every job
fails with exit status 127 and an empty log. Under ``--sdm conda`` a job runs its environment's
``python`` instead. Imports nothing heavy: rules/common.smk calls it while Snakemake builds the DAG.
"""

from __future__ import annotations

import re

# What bash does not take as part of a word: blanks, quotes, escapes, expansions, operators and
# globs. Letters of any script (a Hangul folder) are words.
SPLITS = re.compile(r"[\s'\"\\$`;&|<>()*?\[\]]")


def interpreter_problem(executable: str, conda: bool) -> str | None:
    """Why Snakemake cannot start a rule's script with ``executable`` (the running Python's
    sys.executable), or None where it can: under ``--sdm conda`` (``conda``) or where its shell
    takes the path as one word."""
    if conda or not SPLITS.search(executable):
        return None
    return (
        f"Snakemake starts every rule's script with this Python, {executable!r}, without quoting"
        " its path (snakemake/snakemake#2645): the shell would split it and every job would"
        " fail with exit status 127. Install into a virtual environment whose path has no space"
        " or quote (python3 -m venv ~/.venvs/mminfer, activate it, then the README's install)"
        " and run from there, or run with --sdm conda."
    )
