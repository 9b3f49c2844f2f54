# Shared by all rules: the validated config, the resolved inputs, path and parameter helpers, and
# the results-folder lock. Decided once, at DAG-build time; nothing here imports torch.
import os
import re
import sys
from pathlib import Path

from snakemake.settings.types import DeploymentMethod
from snakemake.utils import min_version

min_version("9.0")

# The mminfer package sits beside the Snakefile: importable here and in every job's script, with
# or without `pip install -e .` (a conda env or a cluster node has only the dependencies).
REPO = str(Path(workflow.basedir))
sys.path.insert(0, REPO)
# (Set here, not required from the user: so no `envvars:` assertion.)
PYTHONPATH = [path for path in (REPO, os.environ.get("PYTHONPATH")) if path]
os.environ.update(PYTHONPATH=os.pathsep.join(PYTHONPATH))
ENV = "../envs/mminfer.yaml"

from mminfer import measurements

from mminfer.workflow import cluster

from mminfer.workflow import fingerprint

from mminfer.workflow import inputs
from mminfer.workflow.interpreter import interpreter_problem
from mminfer.errors import MminferError
from mminfer.workflow.inputs import check_config, resolve_runs
from mminfer.workflow.resultslock import hold_results_folder, release_results_folder

try:
    check_config(config)  # fills in each key's default
    RUNS, UNWRITABLE = resolve_runs(config)
except MminferError as error:
    raise WorkflowError(f"mminfer: {error}")


# On a cluster (--jobs given: Snakemake's nodes), `cores` must be the CPUs of one node of the
# partition: the timing and training rules take every core (rule_threads,
# mminfer/workflow/cluster.py). A run whose threads would be wrong stops before any job (a dry
# run warns).
def check_cluster_threads(resources, dryrun):
    if resources.nodes is None:
        return
    partition = None
    defaults = resources.default_resources
    if defaults is not None and "slurm_partition" in defaults:
        partition = defaults["slurm_partition"].raw
    node = cluster.node_cpus(partition if isinstance(partition, str) else None)
    problem = cluster.threads_problem(resources.cores, resources.max_threads, node)
    if problem is None:
        return
    if not dryrun:
        raise WorkflowError(problem)
    from snakemake.logging import logger

    logger.warning(f"{problem} A run (without -n) stops here.")


check_cluster_threads(workflow.resource_settings, workflow.output_settings.dryrun)

OUTDIR = Path(config["outdir"])
DEMO_DIR = Path(config["demo_dir"])


# A folder this user cannot write (UNWRITABLE: the task's default /root/mm/infer, for a person
# who is not root), or a Python whose path Snakemake's shell would split when it starts a script
# (mminfer/workflow/interpreter.py), stops a run before any job, in onstart; a dry run, --lint or
# --dag only warns.
CONDA = DeploymentMethod.CONDA in workflow.deployment_settings.deployment_method
INTERPRETER = interpreter_problem(sys.executable, CONDA)
BEFORE_ANY_JOB = [*UNWRITABLE, *([INTERPRETER] if INTERPRETER else [])]
if BEFORE_ANY_JOB and workflow.output_settings.dryrun:
    from snakemake.logging import logger

    for problem in BEFORE_ANY_JOB:
        logger.warning(f"mminfer: {problem} A run (without -n) stops here.")


# RUNS: results folder -> inputs. The task's model writes into `outdir`, each of `models` into
# outdir/models/<name>; every rule's `{results}` wildcard is one of these folders.
wildcard_constraints:
    results="|".join(re.escape(folder) for folder in RUNS),


def out(name, results=str(OUTDIR)):
    """A file in a results folder (by default the task's own, `outdir`)."""
    return f"{results}/{name}"


def result(name):
    """A file of the results folder of the rule's `{results}` wildcard."""
    return f"{{results}}/{name}"


def logfile(name):
    return f"{{results}}/logs/{name}"


def bench(name):
    """Snakemake's benchmark file of a job (wall seconds, memory): where a run spends its time."""
    return f"{{results}}/benchmarks/{name}.tsv"


def shown(name, caption, category):
    """A result file, shown in Snakemake's HTML report (`snakemake --report`) with its caption
    (a path relative to the repository)."""
    return report(
        result(name),
        caption=f"../{caption}",
        category=category,
        subcategory="{results}",
    )


def demo(name):
    """A file of the embedded demo model."""
    return str(DEMO_DIR / name)


def run_input(key):
    """Input function: the path of `key` (pretrain, sft, val_data) for a results folder."""
    return lambda wildcards: RUNS[wildcards.results][key]


def lora_input(wildcards):
    """The SFT model's LoRA file of a results folder (config key sft_lora), or no input."""
    return RUNS[wildcards.results]["sft_lora"] or []


def tokenizer_files(wildcards):
    folder = Path(RUNS[wildcards.results]["tokenizer"])
    return [str(folder / "tokenizer.json"), str(folder / "tokenizer_config.json")]


# Each config key's files, per results folder: the named inputs of the jobs that read them.
READ = {
    "pretrain": run_input("pretrain"),
    "sft": run_input("sft"),
    "sft_lora": lora_input,
    "tokenizer": tokenizer_files,
    "val_data": run_input("val_data"),
}


def reads(rule):
    """The inputs of a measurement's rule: the user's files its measurements declare it reads
    (mminfer.measurements.rule_reads), each named after its config key."""
    return {key: READ[key] for key in measurements.rule_reads(rule)}


# Each user file's sha256, remembered by its stat (mminfer/workflow/fingerprint.py).
FINGERPRINTS = fingerprint.Fingerprints(Path(".snakemake") / "mminfer" / "sha256.json")


def named(**params):
    """A rule's params, and beside them its plain values again under their names (``named``).

    Snakemake tells a changed param by the set of the params' values, without their names: two
    params of equal value hide a change of either (time.warmup 1 -> 2 beside time.runs 2 reran
    nothing). ``named`` is one value that holds every name: editing any config key a rule reads
    reruns it, and so does a new results version. Params functions (``contents``,
    ``model_params``, ``torch_threads``) are evaluated per job, and their values are records with
    their keys already; they stay out of it.
    """
    plain = {name: value for name, value in params.items() if not callable(value)}
    if "model" in params:  # a measuring rule: it loads the model
        # the results' version (mminfer.measurements.RESULTS_VERSION): a folder written before a
        # record or a method changed reruns every measurement once
        plain["results_version"] = measurements.RESULTS_VERSION
    return {**params, "named": plain}


def contents(rule):
    """Params function: the sha256 of each file :func:`reads` gives the rule, by path. Under
    `params:` a changed content reruns the job even when the new file is older than the results
    (`cp -p`). The demo's own files are left out: rules make them, and Snakemake already reruns
    what reads a file a rule remade."""
    keys = measurements.rule_reads(rule)

    def sha256(wildcards):
        run = RUNS[wildcards.results]
        paths = []
        for key in keys:
            if run["model_set"] == "demo" and key != "sft_lora":
                continue
            found = READ[key](wildcards)
            paths += found if isinstance(found, list) else [found]
        return FINGERPRINTS.of(paths)

    return sha256


def model_params(wildcards):
    """How the scripts load a checkpoint (loading.ModelSpec's fields) for a results folder."""
    return inputs.model_params(config, RUNS[wildcards.results]["model_set"])


# Portable resources (laptop and cluster alike); the partition, account and nodes' CPUs live in
# profiles/slurm. gpu=1 only when config key 'device' is 'cuda': 'auto' is decided inside the job.
GPU = 1 if config["device"] == "cuda" else 0
MODEL_RESOURCES = {"mem_mb": 4000, "runtime": 20, "gpu": GPU}


def model_resources(name):
    """The resources of a measurement's rule; a timing one (its entry's `alone`) also asks SLURM
    for a node to itself with --exclusive (ignored off a cluster)."""
    if name in measurements.alone_rules():
        return {**MODEL_RESOURCES, "slurm_extra": "--exclusive"}
    return MODEL_RESOURCES


def rule_threads(name):
    """The threads of a measurement's rule: every core for a timing one (its entry's `alone`:
    nothing runs beside it), one for the others."""
    if name in measurements.alone_rules():
        return workflow.cores
    return 1


def torch_threads(wildcards, threads):
    """Params function: torch's threads in a timing job, config key time.threads or, where it is
    null, the job's threads. Snakemake tracks no params function of `threads`, so a timing rule
    also holds `threads=config["time"]["threads"]`: editing the key reruns it."""
    if config["time"]["threads"] is None:
        return threads
    return config["time"]["threads"]


TRAIN_RESOURCES = {"mem_mb": 8000, "runtime": 60, "gpu": 0}


localrules:
    all,
    cache_script,
    report,
    beyond,
    compare,
    plot,
    demo_corpus,
    demo_tokenizer,


def measured(name, category):
    """The result file of measurement ``name`` (mminfer.measurements), shown in Snakemake's HTML
    report with its caption, mminfer/measures/<rule>/<name>.rst."""
    entry = measurements.measurement(name)
    return shown(entry.filename, entry.caption, category)


def report_inputs(report):
    """What report ``report`` ("report" or "beyond") reads, its rule's inputs: the files of the
    measurements it reads (mminfer.measurements.report_reads), by key, the pictures its sections
    show, and the files its words live in, the sections' templates and sentence tables
    (mminfer/report/: editing one reruns the report)."""
    files = {
        measurements.key(name): result(measurements.measurement(name).filename)
        for name in measurements.report_reads(report)
    }
    shown_pictures = {
        f"{name}_png": result(measurements.picture_file(name))
        for name in measurements.report_pictures(report)
    }
    words = Path(REPO) / "mminfer" / "report"
    templates = sorted(
        str(path)
        for path in [*words.glob("**/*.md.j2"), *(words / "sections").glob("*/*.py")]
    )
    return {**files, **shown_pictures, "templates": templates}


def all_outputs():
    """Every file of every results folder (mminfer.measurements.result_files), comparison.md."""
    files = []
    for results in RUNS:
        for name in measurements.result_files():
            files.append(out(name, results))
    if len(RUNS) > 1:
        files.append(out(measurements.COMPARISON))
    return files


# One run at a time per results folder, from any checkout: Snakemake's own lock covers only this
# working directory. onstart runs in a real run's main process alone (never with -n, --lint,
# --dag, --summary, --report, --unlock, nor in a job, which Snakemake starts with --no-hooks);
# the lock ends with the process.
onstart:
    if BEFORE_ANY_JOB:
        raise WorkflowError("mminfer: " + " ".join(BEFORE_ANY_JOB))
    try:
        hold_results_folder(OUTDIR)
    except MminferError as error:
        raise WorkflowError(f"mminfer: {error}")


onsuccess:
    release_results_folder(OUTDIR)


onerror:
    release_results_folder(OUTDIR)
