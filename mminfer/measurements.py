"""Every measurement of a results folder, declared once.

One :class:`Measurement` per result file names it: the file, the record its JSON holds, the rule
that writes it, the config section whose values change it, its section of report.md and its
pictures. Everything that lists measurements is derived from :data:`MEASUREMENTS`: the workflow's
final targets and the report rule's inputs (rules/common.smk, rules/report.smk), the pictures the
plot rule draws, reading a result file back as its record (:func:`read_result`), docs/outputs.md's
table (scripts/config_docs.py), the benchmark's rules (scripts/benchmark.py) and the tests' list of
expected files. Adding a measurement is one entry here plus its own files (docs/development.md,
"Adding a measurement"; tests/test_docs.py checks each entry has them).

One name carries a measurement through: its entry, its report section
(report/sections/<name>.md.j2), its facts function and the key of its record in render_report's
mapping. The file is <name>.json, except where the task fixed another name: count.json holds the
``fed`` measurement (the tokens fed into forward), because Snakemake reserves ``count`` as a name.
A rule writes the measurements that come out of one model load: ``cache`` writes same and fed
(one pair of generations), ``topp`` writes topp and topp_detail (one forward per prefix), ``temp``
writes temp and sampler (the sampler check reuses temp's cached draws at its temperature).

Pure Python, no torch: rules/common.smk imports it while Snakemake builds the DAG. Records and
facts are named as "module:attribute" and imported only when used; a measurement's record and
facts live in its torch-free module mminfer/records/<name>.py, so reading a result back imports
no torch.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path

from mminfer.records import read_record


@dataclass(frozen=True)
class Picture:
    """A PNG drawn from a measurement's record: <name>.png, by ``draw(record, out)``."""

    name: str
    draw: str  # "module:function"
    caption: str  # what it shows, for Snakemake's HTML report (report/plot.rst)


@dataclass(frozen=True)
class Measurement:
    """One result file: what it holds, which rule writes it, where the report shows it."""

    name: str  # the report's key, the section template's name, the caption's (report/<name>.rst)
    record: str  # "module:Class": the dataclass (or mapping type) its JSON holds
    rule: str  # the rule that writes it (rules/*.smk)
    measured_by: str  # "module:function" returning its record, called by the rule's script
    summary: str  # what it holds, in a few words: docs/outputs.md's row
    reads: tuple[str, ...]  # the config keys of the user's files its rule reads (READS)
    file: str = ""  # the result file; "" is <name>.json
    config: str = ""  # the config section (schemas/config.schema.yaml) of its values; "" is rule
    facts: str = ""  # "module:function" deciding its section's facts; "" is no section
    pictures: tuple[Picture, ...] = ()  # the PNGs drawn from it (rules/plots.smk)
    task: bool = False  # one of the task's six files (a report without another leaves it out)
    alone: bool = False  # its rule times and takes every core (`threads: workflow.cores`)
    compared: bool = False  # a column of comparison.md (config key models): compare_row reads it

    @property
    def filename(self) -> str:
        return self.file or f"{self.name}.json"

    @property
    def section(self) -> str | None:
        """Its section template, relative to report/ (None: shown inside another's section)."""
        if not self.facts:
            return None
        return f"sections/{self.name}.md.j2"

    @property
    def config_section(self) -> str:
        return self.config or self.rule

    def record_type(self):
        return resolve(self.record)

    def facts_function(self):
        return resolve(self.facts)

    def glance_function(self):
        """Its ``<name>_glance`` beside its facts (its row in ## 한눈에, where its section opens
        a ``## `` heading), or None."""
        if not self.facts:
            return None
        module = self.facts.split(":")[0]
        return getattr(importlib.import_module(module), f"{self.name}_glance", None)


def resolve(reference: str):
    """The object a "module:attribute" reference names, imported now."""
    module, attribute = reference.split(":")
    return getattr(importlib.import_module(module), attribute)


# In report order: each section follows the one before it in report.md.
MEASUREMENTS = (
    Measurement(
        name="same",
        record="mminfer.records.same:Same",
        rule="cache",
        reads=("pretrain", "tokenizer", "val_data"),
        measured_by="mminfer.greedy:compare_cache",
        facts="mminfer.records.same:same_facts",
        task=True,
        summary="greedy generation with and without the cache: the same ids? Where they part.",
    ),
    Measurement(
        name="fed",
        file="count.json",
        record="mminfer.records.fed:Count",
        rule="cache",
        reads=("pretrain", "tokenizer", "val_data"),
        measured_by="mminfer.greedy:compare_cache",
        facts="mminfer.records.fed:fed_facts",
        task=True,
        summary="the tokens fed into forward with and without the cache, beside the formulas",
    ),
    Measurement(
        name="time",
        record="mminfer.records.time:Timing",
        rule="time",
        reads=("pretrain", "tokenizer", "val_data"),
        alone=True,
        measured_by="mminfer.timing:time_cache",
        facts="mminfer.records.time:time_facts",
        task=True,
        summary="median seconds with and without the cache, the speedup, spreads and verdict",
        compared=True,
    ),
    Measurement(
        name="kvbytes",
        record="mminfer.records.kvbytes:KvBytes",
        rule="kvbytes",
        reads=("pretrain",),
        measured_by="mminfer.kvcache:measure_kv_bytes",
        facts="mminfer.records.kvbytes:kvbytes_facts",
        task=True,
        summary="the cache's measured bytes against the formula, its K shape",
        compared=True,
    ),
    Measurement(
        name="temp",
        record="mminfer.records.temp:Temperatures",
        rule="temp",
        reads=("sft", "sft_lora", "tokenizer"),
        measured_by="mminfer.sampling:temperature_experiment",
        facts="mminfer.records.temp:temp_facts",
        pictures=(
            Picture(
                "temp",
                "mminfer.plots:plot_temp",
                caption=(
                    "Distinct answers per temperature and the answer histogram at the lowest "
                    "temperature (from temp.json)."
                ),
            ),
        ),
        task=True,
        summary="distinct answers of the SFT model per temperature, with each answer's count",
        compared=True,
    ),
    Measurement(
        name="sampler",
        record="mminfer.records.sampler:SamplerCheck",
        rule="temp",
        reads=("sft", "sft_lora", "tokenizer"),
        measured_by="mminfer.sampling:sampler_check",
        config="sampler",
        facts="mminfer.records.sampler:sampler_facts",
        summary="one temperature's samples with and without the cache, and with a second seed",
    ),
    Measurement(
        name="topp",
        record="mminfer.records.topp:TopP",
        rule="topp",
        reads=("pretrain", "tokenizer"),
        measured_by="mminfer.sampling:topp_detail",
        facts="mminfer.records.topp:topp_facts",
        task=True,
        summary="the candidates surviving MiniMind's top-p rule after the open prefix, per p",
        compared=True,
    ),
    Measurement(
        name="topp_detail",
        record="mminfer.records.topp:TopPDetail",
        rule="topp",
        reads=("pretrain", "tokenizer"),
        measured_by="mminfer.sampling:topp_detail",
        pictures=(
            Picture(
                "topp",
                "mminfer.plots:plot_topp",
                caption=(
                    "Sorted next-token probabilities with cumulative mass and each p, at the open "
                    "and the sharp position (from topp_detail.json)."
                ),
            ),
        ),
        summary="the open and a sharp position: survivors, entropy, top tokens (topp's section)",
    ),
    Measurement(
        name="sweep",
        record="mminfer.records.sweep:Sweep",
        rule="sweep",
        reads=("pretrain", "tokenizer", "val_data"),
        alone=True,
        measured_by="mminfer.sweep:sweep",
        facts="mminfer.records.sweep:sweep_facts",
        pictures=(
            Picture(
                "sweep",
                "mminfer.plots:plot_sweep",
                caption=(
                    "Time and tokens fed against generation length, with and without the cache "
                    "(from sweep.json)."
                ),
            ),
        ),
        summary=(
            "time and tokens fed against generation length, per step, with spreads and a "
            "verdict, a cost fit, interpolation where the fit fails"
        ),
    ),
    Measurement(
        name="capacity",
        record="mminfer.records.capacity:Capacity",
        rule="capacity",
        reads=("pretrain",),
        measured_by="mminfer.capacity:capacity",
        facts="mminfer.records.capacity:capacity_facts",
        summary="KV bytes per token per dtype, the sequences that fit per card and context",
        compared=True,
    ),
    Measurement(
        name="serve",
        record="mminfer.records.serve:Serve",
        rule="serve",
        reads=("pretrain", "tokenizer", "val_data"),
        alone=True,
        measured_by="mminfer.serve:serve",
        facts="mminfer.records.serve:serve_facts",
        pictures=(
            Picture(
                "serve",
                "mminfer.plots:plot_serve",
                caption=(
                    "Tokens per second and decode step time against the batch size, with the per- "
                    "user speed target and the memory bound (from serve.json)."
                ),
            ),
        ),
        summary=(
            "decode steps per batch size with spreads and verdicts, the peak, where growth "
            "stops, cliffs, users by speed and by memory"
        ),
    ),
    Measurement(
        name="conversation",
        record="mminfer.records.conversation:Conversation",
        rule="conversation",
        reads=("sft", "sft_lora", "tokenizer"),
        alone=True,
        measured_by="mminfer.conversation:measure_conversation",
        facts="mminfer.records.conversation:conversation_facts",
        pictures=(
            Picture(
                "conversation",
                "mminfer.plots:plot_conversation",
                caption=(
                    "Tokens fed and time to first token per turn of the conversation, the cache "
                    "carried from the last turn against every turn recomputed (from "
                    "conversation.json)."
                ),
            ),
        ),
        summary=(
            "a chat's turns with the cache carried or recomputed: tokens fed, the same answers, "
            "time to first token; a prompt many users share; generate's cache pitfalls"
        ),
        compared=True,
    ),
    Measurement(
        name="topk",
        record="mminfer.records.topk:TopK",
        rule="topk",
        reads=("sft", "sft_lora", "pretrain", "tokenizer"),
        measured_by="mminfer.topk:measure_topk",
        facts="mminfer.records.topk:topk_facts",
        summary=(
            "the task's trap: temp's answers and topp's survivors with generate's default top_k "
            "left on, and the probability top-k cut"
        ),
    ),
    Measurement(
        name="repetition",
        record="mminfer.records.repetition:Repetition",
        rule="repetition",
        reads=("sft", "sft_lora", "pretrain", "tokenizer", "val_data"),
        alone=True,
        measured_by="mminfer.repetition:measure_repetition",
        facts="mminfer.records.repetition:repetition_facts",
        summary=(
            "repetition_penalty: distinct and looping answers per penalty, where greedy leaves "
            "plain greedy, the penalty's cost with spreads and a verdict"
        ),
    ),
    Measurement(
        name="batch",
        record="mminfer.records.batch:Batch",
        rule="batch",
        reads=("pretrain", "tokenizer", "val_data"),
        alone=True,
        measured_by="mminfer.batch:measure_batch",
        facts="mminfer.records.batch:batch_facts",
        summary=(
            "a left-padded batch with its mask against each prompt alone, without the mask, "
            "padded right; its time against the rows one after another; half precision's mask"
        ),
    ),
)

TASK_SCRIPT = "cache.py"  # the task's script, copied beside its results (same.json, count.json)
REPORT = "report.md"
COMPARISON = "comparison.md"  # outdir only, when config key models lists more models
# The user's input files a rule may read, by config key, in the order rules name them.
READS = ("pretrain", "sft", "sft_lora", "tokenizer", "val_data")


def measurement(name: str) -> Measurement:
    for entry in MEASUREMENTS:
        if entry.name == name:
            return entry
    raise KeyError(f"no measurement named {name!r}")


def compared() -> list[str]:
    """The measurements comparison.md puts side by side, in report order."""
    return [entry.name for entry in MEASUREMENTS if entry.compared]


def picture(name: str) -> Picture:
    for entry in MEASUREMENTS:
        for drawn in entry.pictures:
            if drawn.name == name:
                return drawn
    raise KeyError(f"no picture named {name!r}")


def files() -> dict[str, str]:
    """Each measurement's result file, by name."""
    return {entry.name: entry.filename for entry in MEASUREMENTS}


def task_files() -> dict[str, str]:
    """The task's six JSON files, by measurement name."""
    return {entry.name: entry.filename for entry in MEASUREMENTS if entry.task}


def pictures() -> dict[str, str]:
    """Each picture and the result file it is drawn from."""
    drawn = {}
    for entry in MEASUREMENTS:
        for picture in entry.pictures:
            drawn[picture.name] = entry.filename
    return drawn


def drawing(name: str):
    """The function that draws picture ``name`` from its measurement's record."""
    return resolve(picture(name).draw)


def picture_file(picture: str) -> str:
    return f"{picture}.png"


def rules() -> list[str]:
    """The rules that write measurements, in report order, each once."""
    return list(dict.fromkeys(entry.rule for entry in MEASUREMENTS))


def rule_reads(rule: str) -> tuple[str, ...]:
    """The config keys of the user's files ``rule`` reads: its inputs and, by content, its
    params (rules/common.smk). Every measurement the rule writes declares the same."""
    declared = {entry.reads for entry in MEASUREMENTS if entry.rule == rule}
    if len(declared) != 1:
        raise KeyError(f"rule {rule!r}: its measurements declare reads {sorted(declared)}")
    (keys,) = declared
    unknown = [key for key in keys if key not in READS]
    if unknown:
        raise KeyError(f"rule {rule!r} reads {unknown}, none of {READS}")
    return tuple(key for key in READS if key in keys)


def readers(key: str) -> list[str]:
    """The rules that read the user's file of config key ``key``: what a new one reruns."""
    return [rule for rule in rules() if key in rule_reads(rule)]


def alone_rules() -> list[str]:
    """The rules that time and take every core: nothing runs beside them."""
    return list(dict.fromkeys(entry.rule for entry in MEASUREMENTS if entry.alone))


def result_files() -> list[str]:
    """Every file a results folder holds after a run (comparison.md aside)."""
    return [*files().values(), TASK_SCRIPT, *map(picture_file, pictures()), REPORT]


def read_result(path: str | Path):
    """A result file read back as the record of the measurement its name says it holds."""
    name = Path(path).name
    for entry in MEASUREMENTS:
        if entry.filename == name:
            return read_record(path, entry.record_type())
    raise KeyError(f"{name} is no measurement's result file (mminfer.measurements)")
