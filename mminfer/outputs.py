"""The files of one results folder, named once.

rules/common.smk, the report job, the tests and the benchmark all read these names from here. Pure
Python: rules/common.smk imports it while Snakemake builds the DAG.
"""

from __future__ import annotations

# The task's six JSON files, keyed by the name the report rule gives each as an input.
TASK_JSON = {
    "same": "same.json",
    "counts": "count.json",  # (Snakemake reserves the name "count")
    "time": "time.json",
    "kvbytes": "kvbytes.json",
    "temp": "temp.json",
    "topp": "topp.json",
}

# What mminfer measures beyond the task.
EXTRA_JSON = {
    "topp_detail": "topp_detail.json",
    "sampler": "sampler.json",
    "sweep": "sweep.json",
    "capacity": "capacity.json",
    "serve": "serve.json",
}

# Each picture and the JSON file it is drawn from.
PLOTS = {
    "sweep": "sweep.json",
    "temp": "temp.json",
    "topp": "topp_detail.json",
    "serve": "serve.json",
}

TASK_SCRIPT = "cache.py"  # the task's script, copied beside its results (same.json, count.json)
REPORT = "report.md"
COMPARISON = "comparison.md"  # outdir only, when config key models lists more models

# The files comparison.md reads from every model's results folder.
COMPARED_JSON = {
    name: {**TASK_JSON, **EXTRA_JSON}[name]
    for name in ("time", "kvbytes", "temp", "topp", "capacity")
}


def picture(name: str) -> str:
    return f"{name}.png"


def report_inputs() -> dict[str, str]:
    """The report rule's inputs, name -> file: every JSON, every picture, and the task's script."""
    files = {**TASK_JSON, **EXTRA_JSON}
    files |= {f"{name}_png": picture(name) for name in PLOTS}
    files["cache_script"] = TASK_SCRIPT
    return files


def result_files() -> list[str]:
    """Every file a results folder holds after a run (comparison.md aside)."""
    return [*TASK_JSON.values(), TASK_SCRIPT, *EXTRA_JSON.values(), *map(picture, PLOTS), REPORT]
