"""What every result file shares, and reading and writing records.

Each measurement keeps its record in its measures folder (mminfer/measures/<rule>/<name>.py: a
dataclass whose fields are its JSON file's keys), its decisions beside it (decide.py) and its
facts in its report section (mminfer.measurements names them). This base holds
what more than one measurement shares: the provenance (:class:`RunInfo`, the prompts), the first
difference of two greedy paths, the judge of a logit difference (:func:`within_rounding`), the
two bands a busy machine's step times fall in (:func:`bands`), and
:func:`write_record` / :func:`read_record`. One measurement's module never imports another's.

A measuring function returns its file's whole record (provenance passed in as a ``RunInfo``); the
job only writes it (:func:`write_record`), and the report reads it back typed (:func:`read_record`;
mminfer.measurements.read_result finds a file's record by its name). Nothing adds a key afterwards.

Pure Python, no torch: the report and comparison jobs import it without the model code.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import statistics
import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union

from mminfer.errors import MminferError
from mminfer.io import read_json, write_json
from mminfer.records.interval import median_interval

# --- provenance ----------------------------------------------------------------------------------


@dataclass
class LoraInfo:
    """A LoRA applied to the model (MiniMind's model_lora.py, unmerged)."""

    path: str
    sha256: str
    rank: int
    modules: int  # the square linear layers that carry one
    parameters: int


@dataclass
class RunInfo:
    """Which model produced a result, loaded how, and where it ran."""

    model_set: str  # "course", "demo", a name from config key models, or "custom" (a hand run)
    checkpoint: str
    sha256: str
    # Every file the result came from, by path: its sha256 (the checkpoint, its LoRA, the
    # tokenizer's tokenizer.json and tokenizer_config.json, the validation file).
    inputs: dict[str, str]
    backend: str  # "minimind" (MiniMind's own model) or "builtin" (mminfer's twin)
    device: str  # "cpu" or "cuda"
    device_name: str
    dtype: str
    threads: int  # torch's CPU threads during the measurement
    torch: str
    python: str
    config: dict[str, Any]  # every hyperparameter of the model as built (MiniMindConfig)
    parameters: int  # every weight in memory: all experts of a MoE model, a LoRA's pairs
    active_parameters: int  # the weights one token runs through (a MoE model: its experts only)
    lora: LoraInfo | None


@dataclass
class PretrainPrompt:
    """Where the greedy prompt came from.

    The first ``docs`` validation documents, joined with spaces, cut to ``prompt_tokens`` tokens,
    bos in front.
    """

    tokenizer: str
    val_data: str
    docs: int
    prompt_tokens: int


@dataclass
class ChatPrompt:
    """The SFT model's prompt: one user question in the tokenizer's chat format."""

    tokenizer: str
    template: str  # "tokenizer_config.json", or the plain ChatML fallback
    question: str
    prompt_len: int
    seed: int  # torch.manual_seed before each temperature


# --- two greedy paths: same.json and the conversation's turns ------------------------------------


@dataclass
class Answer:
    """One distinct answer and how many samples gave it (temp.json, topk.json, repetition.json)."""

    answer: str
    count: int


@dataclass
class FirstDifference:
    """Where the greedy paths with and without the cache first pick different tokens."""

    step: int  # 0-based: step 0 feeds the prompt
    token_with_cache: int
    token_without_cache: int
    margin_with_cache: float  # top-1 minus top-2 logit at that step
    margin_without_cache: float
    max_abs_logit_diff: float  # between the two paths' logits at that step
    max_abs_logit: float  # the scale rounding errors grow with


# --- a section's row in ## 한눈에 -----------------------------------------------------------------


@dataclass(frozen=True)
class Glance:
    """A ``## `` section's row in ``## 한눈에``, decided from the records its section shows.

    The measurement whose template opens a ``## `` section gives it, from ``<name>_glance`` beside
    its facts (parameters named after measurements, as the facts'). Its section template words it:
    the macro ``glance(g)`` writes the row (headline figure, verdict, one short lesson line, read
    from its facts and ``g``), the macro ``term(key)`` defines each of ``terms`` in the glossary.
    """

    lesson: str  # an enum: which short lesson line the section's glance macro prints
    verdict: str | None = None  # the record's own word ("ok", "noisy", "untrusted"), or None
    terms: tuple[str, ...] = ()  # glossary keys its section uses; the first section using one
    # defines it (report.glossary)
    # a record its row reads was timed on a busy machine (set by the rendering from the busy
    # line's records: mminfer.report.render): the row is marked
    busy: bool = False


# --- judging two paths through the model ---------------------------------------------------------

# Relative logit differences that rounding alone produces between two paths through the model, per
# dtype (a generous bound: float32 agrees to ~1e-6 relative, half precision to ~1e-2); a wrong
# position or cache differs by far more. same.json's paths (with and without the cache) and the
# conversation's ways (carry and recompute) are judged by it, through within_rounding.
ROUNDING_TOLERANCE = {"float32": 1e-3, "bfloat16": 1e-1, "float16": 2e-2}


def rounding_tolerance(dtype: str) -> float:
    """ROUNDING_TOLERANCE's value for ``dtype`` (an unknown one gets the loosest, bfloat16's)."""
    return ROUNDING_TOLERANCE.get(dtype, ROUNDING_TOLERANCE["bfloat16"])


def within_rounding(max_abs_logit_diff: float, max_abs_logit: float, dtype: str) -> bool:
    """Is a logit difference between two paths no larger than rounding in ``dtype``?

    The tolerance is relative to the largest logit, plus one so that logits near 0 are not held to
    a bound of 0.
    """
    return max_abs_logit_diff <= rounding_tolerance(dtype) * (1.0 + max_abs_logit)


AGREEMENTS = ("meet", "within_noise", "apart")  # what agree finds, each said in its own words


def agree(one: tuple[float, float], other: tuple[float, float], relative: float) -> str:
    """How two measurements of one quantity relate, each its (low, high) over its runs: "meet"
    (the ranges overlap), "within_noise" (apart, but the nearest ends lie within ``relative``, the
    run's own noise threshold, of each other; a single run's range is a point) or "apart". Two
    sections that report the same quantity judge it by this; a fitted or interpolated figure has
    no range and is never judged so (it is an estimate)."""
    if one[0] <= other[1] and other[0] <= one[1]:
        return "meet"
    gap = max(one[0], other[0]) - min(one[1], other[1])
    if gap <= relative * min(one[1], other[1]):
        return "within_noise"
    return "apart"


# --- step times in two bands ---------------------------------------------------------------------

BAND_GAP = 1.5  # a sorted run of step times parts into two bands where one step is this x the last
BAND_SHARE = 0.1  # and each band holds at least this share of the steps


def bands(steps_s: list[float]) -> list[dict] | None:
    """Two bands of step times, where the sorted times jump by BAND_GAP and each side holds at
    least BAND_SHARE of them: each band's median and share; None where the times form one.

    A busy machine's steps fall so (two processes on one core: a fast band and a slow one), and
    then a mean or a median stands for neither; the sweep's cached steps and serve's decode steps
    of each batch are described by it, beside the load their run recorded."""
    ordered = sorted(steps_s)
    if len(ordered) < 4:
        return None
    least = max(1, math.ceil(BAND_SHARE * len(ordered)))
    best = None
    for cut in range(least, len(ordered) - least + 1):
        gap = ordered[cut] / ordered[cut - 1] if ordered[cut - 1] > 0 else 0.0
        if gap >= BAND_GAP and (best is None or gap > best[1]):
            best = (cut, gap)
    if best is None:
        return None
    cut = best[0]
    parts = (ordered[:cut], ordered[cut:])
    return [
        {"median_s": statistics.median(part), "share": len(part) / len(ordered)} for part in parts
    ]


def decided_bands(steps_s: list[float]) -> list[dict] | None:
    """:func:`bands` said only where the two groups' intervals separate: each band's median with
    its order-statistic interval (mminfer.records.interval, one look at FAMILY_LEVEL) reaching
    its level, the fast band's wholly below the slow band's. A band of too few steps (under five
    at 90 %) names no group: None, as for times that form one."""
    parts = bands(steps_s)
    if parts is None:
        return None
    ordered = sorted(steps_s)
    cut = round(parts[0]["share"] * len(ordered))
    fast, slow = median_interval(ordered[:cut]), median_interval(ordered[cut:])
    if not (fast.decisive and slow.decisive and fast.high < slow.low):
        return None
    return parts


def token_ratio(count) -> float:
    """How many times more tokens the uncached path feeds (count.json's fed_without_cache over
    fed_with_cache): the count and time sections both read it."""
    return count.fed_without_cache / count.fed_with_cache


# --- reading and writing -------------------------------------------------------------------------


def to_json(record) -> Any:
    """A record as JSON data: dataclasses become objects with their fields in order."""
    if dataclasses.is_dataclass(record):
        return {
            field.name: to_json(getattr(record, field.name)) for field in dataclasses.fields(record)
        }
    if isinstance(record, dict):
        return {key: to_json(value) for key, value in record.items()}
    if isinstance(record, (list, tuple)):
        return [to_json(value) for value in record]
    return record


def write_record(path: str | Path, record) -> None:
    """Write a record as its JSON file, atomically."""
    write_json(path, to_json(record))


@functools.cache
def record_fields(kind: type) -> tuple[dict[str, Any], tuple[str, ...]]:
    """A dataclass's resolved field types and its field names, in order, read once per class."""
    hints = typing.get_type_hints(kind)
    names = tuple(field.name for field in dataclasses.fields(kind))
    return hints, names


def from_json(kind, data, where: str = "") -> Any:
    """The record of type ``kind`` from JSON data.

    ``kind`` is a dataclass, or a dict, list or optional of one. A missing or unknown key is an
    error naming it (a file written by another version).
    """
    origin = typing.get_origin(kind)
    if origin in (Union, types.UnionType):
        if data is None:
            return None
        inner = [arg for arg in typing.get_args(kind) if arg is not type(None)]
        return from_json(inner[0], data, where) if len(inner) == 1 else data
    if origin is dict:
        if not isinstance(data, dict):
            raise ValueError(
                f"{where or 'the file'}: expected an object, got {type(data).__name__}"
            )
        value_kind = typing.get_args(kind)[1]
        return {key: from_json(value_kind, value, f"{where}.{key}") for key, value in data.items()}
    if origin is list:
        if not isinstance(data, list):
            raise ValueError(f"{where or 'the file'}: expected a list, got {type(data).__name__}")
        item_kind = typing.get_args(kind)[0]
        return [from_json(item_kind, value, f"{where}[{i}]") for i, value in enumerate(data)]
    if dataclasses.is_dataclass(kind):
        if not isinstance(data, dict):
            raise ValueError(f"{where or 'the file'}: expected an object for {kind.__name__}")
        hints, names = record_fields(kind)
        missing = [name for name in names if name not in data]
        unknown = [key for key in data if key not in names]
        if missing or unknown:
            raise ValueError(
                f"{where or 'the file'} does not hold a {kind.__name__}: "
                f"missing {missing or 'nothing'}, unknown {unknown or 'nothing'}"
            )
        values = {name: from_json(hints[name], data[name], f"{where}.{name}") for name in names}
        return kind(**values)
    return data


def read_record(path: str | Path, kind):
    """Read a result file back as its record; a file of another shape is a clear error."""
    try:
        data = read_json(path)
        return from_json(kind, data, str(path))
    except (OSError, ValueError) as exc:
        raise MminferError(
            f"result file {path} could not be read as {getattr(kind, '__name__', kind)} ({exc}); "
            "was it written by another version of mminfer? Rerun the rule that writes it."
        ) from None
