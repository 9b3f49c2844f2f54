"""Every measurement of a results folder, declared once.

One :class:`Measurement` per result file names it: the file, the record its JSON holds, the rule
that writes it, the config section whose values change it, its report (report.md or beyond.md), its
section and its pictures. Everything that lists measurements is derived from :data:`MEASUREMENTS`:
the workflow's final targets, the report rule's inputs and the timing rules' threads
(rules/common.smk, rules/report.smk), the pictures the plot rule draws, reading a result file back
as its record (:func:`read_result`), docs/outputs.md, the README's table of files and the timing
jobs of docs/configuration.md (scripts/config_docs.py), the benchmark's rules (scripts/benchmark.py)
and the tests' list of expected files. Adding a measurement is one entry here plus its own files
(docs/development.md, "Adding a measurement"; tests/test_registry.py checks each entry has them).

One name carries a measurement through: its file, <name>.json (the task fixed six of them:
same, count, time, kvbytes, temp, topp), its entry, its record's module
(mminfer/measures/<rule>/<name>.py), its section's module and template
(mminfer/report/sections/<section>/<name>.py and .md.j2; <section> is its own name, or the
section it is shown in: ``part_of``), its caption (mminfer/measures/<rule>/<name>.rst) and the key
of its record in render_report's mapping; its facts and glance functions are named
``<name>_facts`` and ``<name>_glance``, or, joining other rules' records, after every measurement
they read (``sweep_time_facts``). Among a
rule's named inputs and outputs its file's key is :func:`key`: its name, but Snakemake's named
lists are lists, and a list method's name is reserved there (``snakemake.output.count`` is
list.count), so count.json is ``count_json`` in rules/cache.smk and the report rule. A rule writes
the measurements that come out of one model load: ``cache`` writes same and count (one pair of
generations), ``topp`` writes topp and topp_detail (one forward per prefix), ``temp`` writes temp
and sampler (the sampler check reuses temp's cached draws at its temperature), ``time`` writes
time and latency (the streamer's stamps of the same timed runs).

No torch and no matplotlib: rules/common.smk imports this module while Snakemake builds the DAG
(tests/test_registry.py checks it). Records are plain references: they live in the torch-free
mminfer/measures/<rule>/<name>.py. Every function is named as a "module:function" string, imported
when a job uses it (:func:`resolve`): the measuring functions (torch's modules), the drawing
functions (matplotlib's, each section's plot.py) and the facts and glance functions, which live
in the report's sections, above this registry (.importlinter's layers), so the registry could not
import them.
"""

from __future__ import annotations

import importlib
import sys
import typing
from dataclasses import dataclass
from pathlib import Path

from mminfer.measures.anatomy.anatomy import Anatomy
from mminfer.measures.batch.batch import Batch
from mminfer.measures.cache.count import Count
from mminfer.measures.cache.same import Same
from mminfer.measures.capacity.capacity import Capacity
from mminfer.measures.conversation.conversation import Conversation
from mminfer.measures.kvbytes.kvbytes import KvBytes
from mminfer.measures.lookup.lookup import Lookup
from mminfer.measures.remedies.remedies import Remedies
from mminfer.measures.repetition.repetition import Repetition
from mminfer.measures.serve.serve import Serve
from mminfer.measures.sweep.sweep import Sweep
from mminfer.measures.temp.sampler import SamplerCheck
from mminfer.measures.temp.temp import Temperatures
from mminfer.measures.time.latency import Latency
from mminfer.measures.time.time import Timing
from mminfer.measures.topk.topk import TopK
from mminfer.measures.topp.topp import TopP, TopPDetail
from mminfer.records import read_record

# The two reports, by Measurement.report: the task's (report.md) and the rest (beyond.md).
REPORTS = {"report": "report.md", "beyond": "beyond.md"}


# The version of the results a rule writes, in every measuring rule's params (rules/common.smk's
# ``named``): change it with a record's fields or a measurement's method, and a results folder
# written before reruns every measurement once (Snakemake reruns a rule whose script changed,
# not one whose imported code did).
RESULTS_VERSION = "2026-12-07.1"


@dataclass(frozen=True)
class Picture:
    """A PNG drawn from a measurement's record: <name>.png, by ``draw(record, out)``."""

    name: str
    draw: str  # "module:function": its section's plot.py, which imports matplotlib: a string
    caption: str  # what it shows, for Snakemake's HTML report (report/plot.rst)


@dataclass(frozen=True)
class Measurement:
    """One result file: what it holds, which rule writes it, where the report shows it.

    ``facts`` and ``glance`` name functions ("module:function") that take records by parameter
    name: each parameter is a measurement's name, annotated with that measurement's record
    (``sweep_time_facts(sweep: Sweep, time: Timing | None = None)``), and render_report passes the
    record of that name, or None where the report has none (mminfer.report.render.section_facts;
    tests/test_registry.py checks every parameter names a measurement and is annotated with its
    record). Both live in its section's module, mminfer/report/sections/<section>/<name>.py:
    ``<name>_facts`` reading its rule's records only, a join of another rule's named after its
    parameters (``sweep_time_facts``).
    """

    # the file's stem (<name>.json), the report's key, the section template's and the caption's
    # name (<section>/<name>.md.j2, <rule>/<name>.rst)
    name: str
    record: type  # the dataclass (or mapping type) its JSON holds
    rule: str  # the rule that writes it (rules/*.smk)
    measured_by: str  # "module:function" returning its record: a string, its module imports torch
    summary: str  # what it holds, in a few words: the rows of docs/outputs.md and the README
    reads: tuple[str, ...]  # the config keys of the user's files its rule reads (READS)
    config: str = ""  # the config section (schemas/config.schema.yaml) of its values; "" is rule
    facts: str | None = None  # "module:function": its section's facts; None is no section
    glance: str | None = None  # "module:function": its row in ## 한눈에 (a Glance), if any
    # "module:function": its record's stored decisions beside their recomputation from the runs,
    # by the functions that wrote them (its measure's decide.py): mminfer.report.check compares
    stored: str | None = None
    pictures: tuple[Picture, ...] = ()  # the PNGs drawn from it (rules/plots.smk)
    task: bool = False  # one of the task's six files (a report without another leaves it out)
    alone: bool = False  # its rule times and takes every core (rules/common.smk: rule_threads)
    compared: bool = False  # a column of comparison.md (config key models): compare_row reads it
    # the report its section goes to: "report" (report.md, the task's: its six files and what
    # rides with them) or "beyond" (beyond.md, every measurement beyond the task)
    report: str = "beyond"
    # the ``## `` heading its section opens (one with a glance row): the section template, the
    # glance row and report.md's links to beyond.md's sections all read it from here
    heading: str | None = None
    # the section folder it is shown in, where that is another measurement's (count, time and
    # kvbytes in ## KV 캐시's, "cache"); "" is its own, named after it
    part_of: str = ""

    def __post_init__(self):
        if self.report not in REPORTS:
            raise ValueError(f"{self.name}: report {self.report!r} is none of {sorted(REPORTS)}")

    @property
    def filename(self) -> str:
        return f"{self.name}.json"

    @property
    def folder(self) -> str:
        """Its rule's folder, relative to the repository: code, records, template, caption."""
        return f"mminfer/measures/{self.rule}"

    @property
    def section_folder(self) -> str:
        """The folder of the report section it is shown in, mminfer/report/sections/<section>/:
        its facts, sentences and template (``part_of``, or its own name)."""
        return self.part_of or self.name

    @property
    def template(self) -> str | None:
        """Its template, relative to mminfer/report/sections/ (None: no template of its own; its
        record is shown by another measurement's)."""
        if self.facts is None:
            return None
        return f"{self.section_folder}/{self.name}.md.j2"

    @property
    def caption(self) -> str:
        """Its caption in Snakemake's HTML report, relative to the repository."""
        return f"{self.folder}/{self.name}.rst"

    @property
    def config_section(self) -> str:
        return self.config or self.rule


def declared(record) -> tuple[str, str]:
    """Where a record is declared: its module of mminfer/measures/<rule>/ and its name there. A
    mapping
    type (Temperatures, TopP) is an alias of ``dict[...]``, nameless itself: its name is the one
    its module assigns it to."""
    if typing.get_origin(record) is None:  # a class
        return record.__module__, record.__name__
    for module_name, module in sorted(sys.modules.items()):
        if not module_name.startswith("mminfer.measures.") or module_name.endswith(
            (".measure", ".decide")
        ):
            continue  # a measure or decide module imports the records it reads; it declares none
        for name, value in vars(module).items():
            if value is record:
                return module_name, name
    raise KeyError(f"{record!r} is declared in no module of mminfer/measures/")


def resolve(reference: str):
    """The object a "module:attribute" reference names, imported now."""
    module, attribute = reference.split(":")
    return getattr(importlib.import_module(module), attribute)


# In report order: each section follows the one before it in report.md.
MEASUREMENTS = (
    Measurement(
        name="same",
        part_of="cache",
        heading="KV 캐시",
        report="report",
        record=Same,
        rule="cache",
        reads=("pretrain", "tokenizer", "val_data"),
        measured_by="mminfer.measures.cache.measure:compare_cache",
        facts="mminfer.report.sections.cache.same:same_facts",
        glance="mminfer.report.sections.cache.same:same_time_count_glance",
        task=True,
        summary="greedy generation with and without the cache: the same ids, and where they part",
    ),
    Measurement(
        name="count",
        part_of="cache",
        report="report",
        record=Count,
        rule="cache",
        reads=("pretrain", "tokenizer", "val_data"),
        measured_by="mminfer.measures.cache.measure:compare_cache",
        facts="mminfer.report.sections.cache.count:count_facts",
        task=True,
        summary="the tokens fed into forward with and without the cache, beside the formulas",
    ),
    Measurement(
        name="time",
        stored="mminfer.measures.time.decide:stored_decisions",
        part_of="cache",
        report="report",
        record=Timing,
        rule="time",
        reads=("pretrain", "tokenizer", "val_data"),
        alone=True,
        # time_cache without the streamer
        measured_by="mminfer.measures.time.measure:time_with_latency",
        facts="mminfer.report.sections.cache.time:time_count_facts",
        task=True,
        summary=(
            "median seconds with and without the cache after warm-ups, interleaved, every run kept;"
            " the speedup, spreads and a verdict; `speedup_interval` (of the per-round ratios: it "
            "decides `cache_faster`; `speedup`'s own interval, of the ratio of the medians, is "
            "computed from the runs where it is printed, not stored); the narrow side, timed once "
            "after each timed round: the same model class at minimal width (`narrow_shape`), its "
            "cached generate at the same P and N (`narrow_runs_s`, paired with `with_cache_runs_s` "
            "by index, `narrow_warmup_s`, `narrow_s`), and `fixed_share_runs` (each round's narrow "
            "run / its cached run: a lower bound of the cached path's share that is fixed cost per "
            "call) with its `fixed_share_interval`"
        ),
        compared=True,
    ),
    Measurement(
        name="kvbytes",
        part_of="cache",
        report="report",
        record=KvBytes,
        rule="kvbytes",
        reads=("pretrain",),
        measured_by="mminfer.measures.kvbytes.measure:measure_kv_bytes",
        facts="mminfer.report.sections.cache.kvbytes:kvbytes_facts",
        task=True,
        summary="the cache's measured bytes after random tokens against the formula, K's shape",
        compared=True,
    ),
    Measurement(
        name="temp",
        heading="온도",
        report="report",
        record=Temperatures,
        rule="temp",
        reads=("sft", "sft_lora", "tokenizer"),
        measured_by="mminfer.measures.temp.measure:temperature_experiment",
        facts="mminfer.report.sections.temp.temp:temp_facts",
        glance="mminfer.report.sections.temp.temp:temp_glance",
        pictures=(
            Picture(
                "temp",
                "mminfer.report.sections.temp.plot:plot_temp",
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
        part_of="temp",
        report="report",
        record=SamplerCheck,
        rule="temp",
        reads=("sft", "sft_lora", "tokenizer"),
        measured_by="mminfer.measures.temp.measure:sampler_check",
        config="sampler",
        facts="mminfer.report.sections.temp.sampler:sampler_facts",
        summary=(
            "one temperature's samples with and without the cache (temp's own draws), and with a "
            "second seed"
        ),
    ),
    Measurement(
        name="topp",
        heading="top-p",
        report="report",
        record=TopP,
        rule="topp",
        reads=("pretrain", "tokenizer"),
        measured_by="mminfer.measures.topp.measure:topp_detail",
        facts="mminfer.report.sections.topp.topp:topp_facts",
        glance="mminfer.report.sections.topp.topp:topp_glance",
        task=True,
        summary="the candidates surviving MiniMind's top-p rule after the open prefix, per p",
        compared=True,
    ),
    Measurement(
        name="topp_detail",
        part_of="topp",
        report="report",
        record=TopPDetail,
        rule="topp",
        reads=("pretrain", "tokenizer"),
        measured_by="mminfer.measures.topp.measure:topp_detail",
        pictures=(
            Picture(
                "topp",
                "mminfer.report.sections.topp.plot:plot_topp",
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
        heading="길이에 따른 비용",
        record=Sweep,
        rule="sweep",
        reads=("pretrain", "tokenizer", "val_data"),
        alone=True,
        measured_by="mminfer.measures.sweep.measure:sweep",
        facts="mminfer.report.sections.sweep.sweep:sweep_time_facts",
        glance="mminfer.report.sections.sweep.sweep:sweep_glance",
        pictures=(
            Picture(
                "sweep",
                "mminfer.report.sections.sweep.plot:plot_sweep",
                caption=(
                    "Time and tokens fed against generation length, with and without the cache "
                    "(from sweep.json)."
                ),
            ),
        ),
        summary=(
            "time and tokens fed against generation length, per step, with spreads and a "
            "verdict; a cost fit (interpolation where it fails) and its predictions"
        ),
    ),
    Measurement(
        name="anatomy",
        heading="한 단계의 해부",
        record=Anatomy,
        rule="anatomy",
        reads=("pretrain", "tokenizer", "val_data"),
        alone=True,
        measured_by="mminfer.measures.anatomy.measure:measure_anatomy",
        facts="mminfer.report.sections.anatomy.anatomy:anatomy_time_facts",
        glance="mminfer.report.sections.anatomy.anatomy:anatomy_time_glance",
        pictures=(
            Picture(
                "anatomy",
                "mminfer.report.sections.anatomy.plot:plot_anatomy",
                caption=(
                    "Each path's modeled time (dispatch, then the larger of arithmetic and "
                    "memory) against time.json's median (from anatomy.json and time.json)."
                ),
            ),
            Picture(
                "anatomy_profile",
                "mminfer.report.sections.anatomy.plot:plot_profile",
                caption=(
                    "One stacked bar per path: its generate under torch.profiler, each part's "
                    "median and the rest as shares of their sum, 100 % a bar (from anatomy.json)."
                ),
            ),
        ),
        summary=(
            "step 1's generate taken apart, both ways, per call of forward: tokens fed, "
            "context, logits rows, FLOPs (counted and by formula), bytes, kernels run; this "
            "machine's op cost, matmul FLOP/s and bandwidth, each probe with its runs, the "
            "interval of their rates (`per_s_interval`) and `reliable` (false where the runs "
            "part at their widest gap into two groups whose medians differ more than 2x: no "
            "term, share or fit is said from it), and the `contention` while the probes ran; "
            "`profile.with_cache` and `profile.without_cache`: the generate under torch.profiler "
            "in a few rounds, each category's leaf self time (`parts_s`, `parts_interval`; "
            "`rest`: the wall minus the top-level ops' time), `wall_s`, the `rounds` and the "
            "`profiler_cost` (profiled / unprofiled wall). `fixed_step_s` and "
            "`fixed_step_runs_s` are gone: time.json's narrow side times the fixed cost, in the "
            "rounds it bounds"
        ),
    ),
    Measurement(
        name="remedies",
        stored="mminfer.measures.remedies.decide:stored_decisions",
        heading="고정 비용 줄이기",
        record=Remedies,
        rule="remedies",
        reads=("pretrain", "tokenizer", "val_data"),
        alone=True,
        measured_by="mminfer.measures.remedies.measure:measure_remedies",
        facts="mminfer.report.sections.remedies.remedies:remedies_facts",
        glance="mminfer.report.sections.remedies.remedies:remedies_glance",
        summary=(
            "what removes the fixed cost per decode step: an own decode loop with an in-place "
            "cache, GQA attention without repeat_kv, both, torch.compile (where the compiler "
            "works; `compile_cost`: its first generation's seconds beyond the warm ones and the "
            "tokens that pay them back, `break_even_interval`), each with "
            "MiniMind's greedy ids (`same_ids`) and timed against its cached generate "
            "(`saved_per_step_interval`, the speedup after it) and against the control loop "
            "(`control_runs_s`, `own_saved_per_step_interval`, `own_saves`: the remedy's own "
            "saving, the loop's not counted again); logits_to_keep=1 apart; every side in one "
            "interleaved timing, each remedy's `minimind_runs_s` the shared cached side's runs "
            "of the same rounds"
        ),
    ),
    Measurement(
        name="lookup",
        stored="mminfer.measures.lookup.decide:stored_decisions",
        heading="호출 수 줄이기",
        record=Lookup,
        rule="lookup",
        reads=("pretrain", "sft", "sft_lora", "tokenizer", "val_data"),
        alone=True,
        measured_by="mminfer.measures.lookup.measure:measure_lookup",
        config="lookup",
        facts="mminfer.report.sections.lookup.lookup:lookup_facts",
        glance="mminfer.report.sections.lookup.lookup:lookup_glance",
        pictures=(
            Picture(
                "lookup",
                "mminfer.report.sections.lookup.plot:plot_lookup",
                caption=(
                    "How many guesses each verify call kept, per number of guesses K, on the "
                    "validation prompt and on the chat prompt (from lookup.json)."
                ),
            ),
        ),
        summary=(
            "prompt-lookup decoding at each number of guesses K (`by_guesses`), on step 1's "
            "prompt and on the SFT model's chat prompt (`cases`): the greedy ids against "
            "MiniMind's cached generate (`same_ids`, `first_divergence`, `top2_margin` against "
            "`tolerance`), forward `calls` and tokens `fed` against the cached generate's "
            "`calls_cached` and `fed_cached`, guesses `proposed` and `accepted` "
            "(`accepted_per_call`), the cache's bytes after rollback against the formula, its "
            "time against the cached generate's in the same rounds (`speedup` with "
            "`speedup_interval`, `faster`), and a call of K + 1 tokens against a one-token step "
            "(`wide.ratio_interval`)"
        ),
    ),
    Measurement(
        name="latency",
        heading="사용자가 기다리는 시간",
        record=Latency,
        rule="time",
        reads=("pretrain", "tokenizer", "val_data"),
        alone=True,
        measured_by="mminfer.measures.time.measure:time_with_latency",
        config="latency",
        facts="mminfer.report.sections.latency.latency:latency_time_sweep_facts",
        glance="mminfer.report.sections.latency.latency:latency_glance",
        pictures=(
            Picture(
                "latency",
                "mminfer.report.sections.latency.plot:plot_latency",
                caption=(
                    "The gap before each new token against the step, with and without the cache, "
                    "with MLPerf's interactive TPOT limit (from latency.json)."
                ),
            ),
        ),
        summary=(
            "what a user waits for, from time.json's own runs: time to the first token, the gaps "
            "between tokens (p50/p90/p99/max), TPOT, end-to-end; eval_llm's [Speed] beside them; "
            "the streamer's cost"
        ),
    ),
    Measurement(
        name="capacity",
        heading="카드당 사용자 수",
        record=Capacity,
        rule="capacity",
        reads=("pretrain",),
        measured_by="mminfer.measures.capacity.measure:capacity",
        facts="mminfer.report.sections.capacity.capacity:capacity_facts",
        glance="mminfer.report.sections.capacity.capacity:capacity_glance",
        summary="KV bytes per token per dtype, the sequences that fit per card and context",
        compared=True,
    ),
    Measurement(
        name="serve",
        heading="서빙",
        record=Serve,
        rule="serve",
        reads=("pretrain", "tokenizer", "val_data"),
        alone=True,
        measured_by="mminfer.measures.serve.measure:serve",
        facts="mminfer.report.sections.serve.serve:serve_sweep_facts",
        glance="mminfer.report.sections.serve.serve:serve_glance",
        pictures=(
            Picture(
                "serve",
                "mminfer.report.sections.serve.plot:plot_serve",
                caption=(
                    "Tokens per second and decode step time against the batch size, with the per- "
                    "user speed target and the memory bound (from serve.json)."
                ),
            ),
        ),
        summary=(
            "decode steps per batch size with spreads and verdicts, the peak, where growth "
            "stops, cliffs; users by speed and by memory, which bound binds"
        ),
    ),
    Measurement(
        name="conversation",
        stored="mminfer.measures.conversation.decide:stored_decisions",
        heading="대화",
        record=Conversation,
        rule="conversation",
        reads=("sft", "sft_lora", "tokenizer"),
        alone=True,
        measured_by="mminfer.measures.conversation.measure:measure_conversation",
        facts="mminfer.report.sections.conversation.conversation:conversation_serve_facts",
        glance="mminfer.report.sections.conversation.conversation:conversation_glance",
        pictures=(
            Picture(
                "conversation",
                "mminfer.report.sections.conversation.plot:plot_conversation",
                caption=(
                    "Tokens fed and time to first token per turn of the conversation, the cache "
                    "carried from the last turn against every turn recomputed (from "
                    "conversation.json)."
                ),
            ),
        ),
        summary=(
            "a chat's turns with the cache carried from turn to turn against recomputed every "
            "turn (eval_llm.py's way): tokens fed against their formulas, the same answers, where "
            "re-tokenization breaks the prefix, time to first token; the bytes of a prompt many "
            "users share; generate's cache pitfalls"
        ),
        compared=True,
    ),
    Measurement(
        name="topk",
        heading="top-k 함정",
        record=TopK,
        rule="topk",
        reads=("sft", "sft_lora", "pretrain", "tokenizer"),
        measured_by="mminfer.measures.topk.measure:measure_topk",
        facts="mminfer.report.sections.topk.topk:topk_temp_topp_facts",
        glance="mminfer.report.sections.topk.topk:topk_temp_glance",
        summary=(
            "the task's trap: temp's answers and topp's survivors with generate's default top_k "
            "left on, and the probability top-k cut"
        ),
    ),
    Measurement(
        name="repetition",
        stored="mminfer.measures.repetition.decide:stored_decisions",
        heading="반복 페널티",
        record=Repetition,
        rule="repetition",
        reads=("sft", "sft_lora", "pretrain", "tokenizer", "val_data"),
        alone=True,
        measured_by="mminfer.measures.repetition.measure:measure_repetition",
        facts="mminfer.report.sections.repetition.repetition:repetition_temp_facts",
        glance="mminfer.report.sections.repetition.repetition:repetition_glance",
        summary=(
            "repetition_penalty: distinct and looping answers per penalty, where greedy leaves "
            "plain greedy, the penalty's cost with spreads and a verdict"
        ),
    ),
    Measurement(
        name="batch",
        stored="mminfer.measures.batch.decide:stored_decisions",
        heading="배치와 패딩",
        record=Batch,
        rule="batch",
        reads=("pretrain", "tokenizer", "val_data"),
        alone=True,
        measured_by="mminfer.measures.batch.measure:measure_batch",
        facts="mminfer.report.sections.batch.batch:batch_facts",
        glance="mminfer.report.sections.batch.batch:batch_glance",
        summary=(
            "a left-padded batch with its attention_mask against each prompt alone, without the "
            "mask and padded right; its time against the rows one after another; half "
            "precision's mask"
        ),
    ),
)

TASK_SCRIPT = "cache.py"  # the task's script, copied beside its results (same.json, count.json)
REPORT = REPORTS["report"]
BEYOND = REPORTS["beyond"]
COMPARISON = "comparison.md"  # outdir only, when config key models lists more models
# The user's input files a rule may read, by config key, in the order rules name them.
READS = ("pretrain", "sft", "sft_lora", "tokenizer", "val_data")


def measurement(name: str) -> Measurement:
    for entry in MEASUREMENTS:
        if entry.name == name:
            return entry
    raise KeyError(f"no measurement named {name!r}")


def key(name: str) -> str:
    """The key of measurement ``name``'s file among a rule's named inputs or outputs (rules/*.smk,
    ``snakemake.input``, ``snakemake.output``): its name, or ``<name>_json`` where that names a
    list method. Snakemake's named lists are lists: it refuses a list method's name as a key, and
    ``snakemake.output.count`` would be list.count."""
    return f"{name}_json" if hasattr(list, name) else name


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


def report_reads(report: str) -> list[str]:
    """The measurements whose records ``report`` ("report" or "beyond", REPORTS) reads, in report
    order: report.md its own sections' (the task's files and what rides with them), beyond.md
    every measurement (its sections set the task's figures beside their own)."""
    if report not in REPORTS:
        raise KeyError(f"no report {report!r}: {sorted(REPORTS)}")
    return [entry.name for entry in MEASUREMENTS if report == "beyond" or entry.report == report]


def report_pictures(report: str) -> list[str]:
    """The pictures ``report``'s own sections show."""
    return [
        drawn.name for entry in MEASUREMENTS if entry.report == report for drawn in entry.pictures
    ]


def headings() -> dict[str, str]:
    """Each section's ``## `` heading, by measurement name (those that open one)."""
    return {entry.name: entry.heading for entry in MEASUREMENTS if entry.heading is not None}


def report_of_file(file: str) -> str:
    """The report key ("report", "beyond") of a report's file name."""
    for report, name in REPORTS.items():
        if name == file:
            return report
    raise KeyError(f"{file} is no report: {sorted(REPORTS.values())}")


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
    return [*files().values(), TASK_SCRIPT, *map(picture_file, pictures()), *REPORTS.values()]


def read_result(path: str | Path):
    """A result file read back as the record of the measurement its name says it holds."""
    name = Path(path).name
    for entry in MEASUREMENTS:
        if entry.filename == name:
            return read_record(path, entry.record)
    raise KeyError(f"{name} is no measurement's result file (mminfer.measurements)")
