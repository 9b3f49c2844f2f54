"""What every result file holds: one dataclass per JSON file, whose fields are the file's keys.

A measuring function returns its file's whole record (provenance passed in as a ``RunInfo``); the
job only writes it (:func:`write_record`), and the report reads it back typed (:func:`read_record`;
mminfer.measurements.read_result finds a file's record by its name).
Nothing adds a key afterwards, so every key of ``time.json`` is a field of :class:`Timing` here.

Two files of the task have keys that are values: ``temp.json`` maps each temperature ("0.3") to a
:class:`TemperatureSummary`, and ``topp.json`` maps each p ("0.9") to a survivor count. Their
records are those mappings (:data:`Temperatures`, :data:`TopP`).

Pure Python, no torch: the report and comparison jobs import it without the model code.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union

from mminfer.errors import MminferError
from mminfer.io import read_json, write_json

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


# --- steps 1-2: same.json, count.json ------------------------------------------------------------


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


@dataclass
class Same:
    """same.json: are the greedy tokens the same with and without the cache?"""

    same_ids: bool
    ids: list[int]  # the new tokens with the cache
    prompt_len: int
    new_tokens: int
    ids_without_cache: list[int]
    max_abs_logit_diff: float  # over the steps up to the first difference
    first_difference: FirstDifference | None
    text: str  # ids, decoded
    prompt: PretrainPrompt
    run: RunInfo


@dataclass
class Count:
    """count.json: the tokens fed into forward by each method, beside their formulas."""

    prompt_len: int
    new_tokens: int
    fed_with_cache: int
    fed_without_cache: int
    formula_with_cache: int  # P + (N - 1)
    formula_without_cache: int  # N * P + N (N - 1) / 2
    calls_with_cache: int
    calls_without_cache: int
    prompt: PretrainPrompt
    run: RunInfo


# --- step 3: time.json ---------------------------------------------------------------------------


@dataclass
class Timing:
    """time.json: median seconds of each method after warm-ups, and how far to trust them."""

    with_cache_s: float
    without_cache_s: float
    speedup: float  # without / with
    prompt_len: int
    new_tokens: int
    warmup: int
    runs: int
    max_runs: int
    order: str
    cv_with_cache: float  # coefficient of variation of the timed runs
    cv_without_cache: float
    runs_done: int
    extra_rounds: int
    doubts: list[str]
    verdict: str  # "ok", "noisy" or "untrusted"
    noisy_cv: float
    with_cache_runs_s: list[float]
    without_cache_runs_s: list[float]
    with_cache_warmup_s: list[float]
    without_cache_warmup_s: list[float]
    threads: int
    cpu_count: int | None
    load_before: list[float] | None  # 1-, 5- and 15-minute load averages
    load_after: list[float] | None
    run: RunInfo


# --- step 4: kvbytes.json ------------------------------------------------------------------------


@dataclass
class KvBytes:
    """kvbytes.json: the cache's real bytes after feeding random tokens, against the formula."""

    tokens: int
    measured_bytes: int  # the byte sum of every tensor of past_key_values
    formula_bytes: int  # 2 x layers x tokens x KV heads x head_dim x bytes per element
    k_shape: list[int]  # the first layer's K: (batch, tokens, kv_heads, head_dim)
    batch: int
    seed: int
    matches: bool
    layers: int
    kv_heads: int
    heads: int
    head_dim: int
    dtype: str
    bytes_per_element: int
    bytes_per_token: int
    after_repeat_kv_bytes: int  # what the cache would take if it were stored after repeat_kv
    allocator_bytes: int | None  # CUDA only: memory_allocated after - before
    run: RunInfo


# --- step 5: temp.json ---------------------------------------------------------------------------


@dataclass
class Answer:
    answer: str
    count: int


@dataclass
class TemperatureSummary:
    """One temperature of temp.json: how many of the sampled answers differ."""

    distinct: int
    samples: int
    top_share: float  # the most common answer's share
    distinct_1: float  # distinct characters over all characters of the answers
    distinct_2: float  # distinct character bigrams over all bigrams
    answers: list[Answer]  # most common first
    prompt: ChatPrompt
    run: RunInfo


Temperatures = dict[str, TemperatureSummary]  # temp.json: "0.3" -> its summary, lowest first


@dataclass
class SampleDifference:
    """Where two sampled answers of the same seed first pick different tokens."""

    sample: int  # the row of num_return_sequences
    step: int  # 0-based new token
    token_with_cache: int
    token_without_cache: int


@dataclass
class SamplerCheck:
    """sampler.json: the sampler is not the cache.

    With one seed, the task's samples drawn with the cache and without are the same answers; with a
    second seed they are other answers.
    """

    temperature: float
    samples: int
    new_tokens: int
    seed: int
    second_seed: int
    identical_with_and_without_cache: int  # of samples, token for token
    first_difference: SampleDifference | None
    differ_with_second_seed: int  # of samples, with the cache, against the first seed's
    prompt: ChatPrompt
    run: RunInfo


# --- step 6: topp.json, topp_detail.json ---------------------------------------------------------

TopP = dict[str, int]  # topp.json: "0.5" -> survivors under MiniMind's top-p rule


@dataclass
class TopToken:
    id: int
    token: str
    prob: float


@dataclass
class Position:
    """The next-token distribution after [bos] + prefix."""

    prefix: str
    survivors: TopP
    entropy_bits: float
    top_tokens: list[TopToken]
    sorted_probs: list[float]  # the largest probabilities, descending
    perplexity: float


@dataclass
class TopPDetail:
    """topp_detail.json: both positions, the open one (topp.json) and a sharp one."""

    ps: list[float]
    positions: dict[str, Position]  # "open", "sharp"
    run: RunInfo


# --- beyond the task: sweep.json -----------------------------------------------------------------


@dataclass
class SweepPoint:
    """One generation length N, read off the first N steps of the clocked generations."""

    new_tokens: int
    fed_with_cache: int
    fed_without_cache: int | None  # None: not every uncached step ran (see clocked_without_cache)
    formula_with_cache: int
    formula_without_cache: int
    clocked_with_cache: int  # of the first N steps, those clocked (each one forward call)
    clocked_without_cache: int
    with_cache_s: float
    without_cache_s: float | None  # clocked steps plus the others as filled (None: one has no time)
    without_cache_from: str  # the first N uncached steps: "clocked", or the others from "fit",
    # "interpolation" (between clocked steps) or "none"
    token_ratio: float
    time_ratio: float | None
    decode_s_per_token: float | None  # the mean cached step after the prefill


@dataclass
class SweepSteps:
    """Every step of the longest generation per method, clocked and as the fit gives it.

    A step that was not clocked is None. A clocked step's time is the median over the runs, its
    low and high the fastest and slowest run. ``filled_without_cache_s`` is every uncached step's
    time the lengths add up: clocked, else the fit's where the fit holds, else interpolated
    between the clocked steps either side (None past the last clocked step); ``without_cache_how``
    says which, step by step ("clocked", "fit", "interpolation", "none").
    """

    with_cache_s: list[float]
    fed_with_cache: list[int]
    without_cache_s: list[float | None]
    fed_without_cache: list[int | None]
    fitted_with_cache_s: list[float]
    fitted_without_cache_s: list[float]
    with_cache_low_s: list[float]
    with_cache_high_s: list[float]
    without_cache_low_s: list[float | None]
    without_cache_high_s: list[float | None]
    filled_without_cache_s: list[float | None]
    without_cache_how: list[str]


@dataclass
class StepFit:
    """The cost model fitted over every step of both methods."""

    model: str
    method: str
    fixed_s_with_cache: float
    fixed_s_without_cache: float
    per_token_s: float
    per_pair_s: float
    held_at_zero: list[str]
    r2: float | None
    median_relative_residual: dict[str, float]  # per method
    holds: bool
    measured_new_tokens: list[int]
    measured_context: list[int]
    steps: int


@dataclass
class Prediction:
    """The fit's times and ratios at one length, measured or extrapolated."""

    new_tokens: int
    measured: bool
    with_cache_s: float
    without_cache_s: float
    time_ratio: float | None
    token_ratio: float
    fixed_share_with_cache: float | None


@dataclass
class Sweep:
    """sweep.json: cost against generation length after the task's prompt."""

    prompt_len: int
    lengths: list[int]
    longest: int
    warmup: int
    runs: int
    all_steps_up_to: int  # without the cache, every step of the first this-many tokens is clocked
    spread_steps: int  # and this many more, spread evenly up to the longest
    how: str
    threads: int
    load_before: list[float] | None
    load_after: list[float] | None
    cv_with_cache: float  # coefficient of variation of the runs (each run: its clocked steps' sum)
    cv_without_cache: float
    cv_with_cache_within_runs: float  # the steps' spread within a run around their trend
    cv_without_cache_within_runs: float
    noisy_cv: float  # the threshold of the runs' spread
    step_noisy_cv: float  # the threshold of the steps' spread within a run (timing.STEP_NOISY_CV)
    doubts: list[str]  # see mminfer.sweep.spread_doubts
    verdict: str  # "ok", "noisy" or "untrusted" (mminfer.timing.verdict_of)
    points: list[SweepPoint]
    steps: SweepSteps
    uncached_ids_match: bool  # every clocked uncached step picked the cached generation's token
    ttft_s: float
    decode_s_per_token: float | None
    fit: StepFit
    predictions: list[Prediction]
    run: RunInfo


# --- beyond the task: capacity.json --------------------------------------------------------------


@dataclass
class DtypeBytes:
    """One cached token's bytes in one dtype, measured on a real cache."""

    measured: int | None  # None: this dtype's forward failed on the device (error says why)
    formula: int
    matches: bool
    error: str | None


@dataclass
class CapacityRow:
    dtype: str
    memory_gib: float
    context: int
    kv_bytes_per_sequence: int | None
    free_bytes: int
    sequences: int | None


@dataclass
class BatchCheck:
    """A real cache of ``batch`` sequences against the prediction."""

    batch: int
    context: int
    measured_bytes: int
    predicted_bytes: int
    matches: bool
    k_shape: list[int]


@dataclass
class Capacity:
    """capacity.json: how many sequences' caches fit on a card."""

    bytes_per_token: dict[str, DtypeBytes]
    weight_bytes: dict[str, int]  # every parameter in memory, in each dtype
    parameters: int  # all of them: every expert of a MoE model
    active_parameters: int  # those one token runs through
    experts: int | None  # per layer, in a MoE model
    experts_per_token: int | None
    layers: int
    kv_heads: int
    head_dim: int
    memory_gib: list[float]
    contexts: list[int]
    rows: list[CapacityRow]
    batch_check: BatchCheck
    formula: str
    run: RunInfo


# --- beyond the task: serve.json -----------------------------------------------------------------


@dataclass
class BatchStep:
    """One batch size: the task prompt decoded ``batch`` times together, with the cache.

    Clocked in every pass of serve.passes (the passes interleaved across the batch sizes): the
    spread is over the passes, and the verdict is the time job's rule (mminfer.timing.verdict_of).
    """

    batch: int
    prefill_s: float | None  # batch x prompt tokens at once (median of the passes); None past
    # serve.prefill_up_to
    decode_step_s: float  # the median of every decode step of every pass
    decode_steps_s: list[float]  # every decode step, pass after pass
    prefills_s: list[float] | None  # each pass's prefill
    pass_step_s: list[float]  # each pass's median decode step
    step_low_s: float  # the fastest pass's median step
    step_high_s: float  # the slowest pass's median step
    cv_decode_step: float  # coefficient of variation of the passes' median steps
    cv_within_passes: float  # the steps' spread within a pass around their trend (median)
    cv_prefill: float | None  # of the passes' prefills
    # see mminfer.serve.batch_doubts: each spread (of the passes, of the steps within them around
    # their trend) judged against Serve.step_noisy_cv
    doubts: list[str]
    verdict: str  # "ok", "noisy" or "untrusted"
    tokens_per_second: float  # batch / decode_step_s: the machine's
    per_user_tokens_per_second: float  # 1 / decode_step_s: each user's
    kv_bytes: int  # measured: the byte sum of the batch's cache
    # the formula: 2 x layers x batch x (prompt + decode steps) x KV heads x head_dim x bytes
    formula_kv_bytes: int
    kv_bytes_match: bool
    experts_touched: float | None  # MoE: distinct experts per layer in a decode step (median)


@dataclass
class ServeFit:
    """The decode step against the batch: step(B) = fixed + per_sequence x B.

    Fitted in relative error (every batch counts alike, not only the slowest) over the batches
    from the smallest up to the largest where the line holds (``fitted_batches``).
    """

    model: str
    method: str
    fixed_s: float
    per_sequence_s: float
    held_at_zero: list[str]
    median_relative_residual: float  # over fitted_batches
    holds: bool  # every batch of fitted_batches within holds_within, and least_batches
    holds_within: float  # the relative error every batch of a range must keep (serve.HOLDS_WITHIN)
    least_batches: int  # batches a range needs to claim the line holds (two fit any line)
    measured_batches: list[int]  # the smallest and largest
    fitted_batches: list[int]  # the smallest and largest of the range the fit claims
    relative_residuals: list[float]  # |fit - measured| / measured at every measured batch
    crossover_batch: float | None  # fixed / per_sequence: past it, the batch's own work dominates


@dataclass
class CacheLevel:
    """One of the device's memory caches (a CPU's L1d, L2, L3; a GPU's L2), as the threads of a
    decode step hold it together (mminfer.serve.cpu_caches)."""

    name: str  # "L2"; "2 x L2" where the threads hold two copies (two cores' own L2)
    bytes: int  # the size of one copy x the copies held


@dataclass
class Cliff:
    """Two consecutive batch sizes between which the decode step grew faster than the batch.

    Beside it, the memory a decode step reads: every weight once, and the batch's KV cache as
    stored; and the device's caches whose size lies between the step's memory at the two batches:
    where one does, the step's memory outgrew that cache, the likely cause; where none does, this
    comparison names no cause. The KV cache as attention sees it after repeat_kv is context only.
    """

    from_batch: int
    to_batch: int
    batch_ratio: float
    step_ratio: float  # the larger batch's decode step / the smaller one's
    weight_bytes: int  # every parameter in memory, read once a step
    kv_bytes_before: int
    kv_bytes_after: int
    attention_kv_bytes_before: int  # after repeat_kv: x heads / KV heads (context, decides nothing)
    attention_kv_bytes_after: int
    step_bytes_before: int  # weight_bytes + kv_bytes_before
    step_bytes_after: int
    crossed: list[CacheLevel]  # whose size lies between step_bytes_before and step_bytes_after
    # "cache" (a level lies between), "spread" (either batch's verdict is not ok: the cliff may be
    # the machine's noise; no cause named) or "unknown" (no level lies between)
    likely_cause: str


@dataclass
class UsersBound:
    """How many users this device takes at a per-user decode speed and context."""

    tokens_per_second: float  # each user's target
    step_target_s: float  # 1 / tokens_per_second
    context: int
    users_by_speed: int
    speed_how: str  # "measured", "fit", "lower bound" or "too slow" (see serve.users_by_speed)
    speed_between: list[int] | None  # the measured batches either side of the target
    kv_bytes_per_token: int
    free_bytes: int | None  # of this device, now (the weights are loaded)
    free_source: str
    users_by_memory: int | None
    memory_formula: str
    binding: str  # "speed", "memory", or "not reached" (the speed held at every measured batch)


@dataclass
class Serve:
    """serve.json: decode steps against the batch size, and the users one machine serves."""

    prompt_len: int
    decode_steps: int
    warmup: int
    prefill_up_to: int  # batches up to this size also clock their prefill
    decode_context: int  # the tokens in each user's cache by the last decode step clocked
    context_asked: int  # serve.context; users.context is it, capped at the model's positions
    batches_planned: list[int]
    memory_cap_gib: float
    left_out_by_cap: list[int]  # batches whose cache would pass serve.memory_cap_gib
    threads: int
    load_before: list[float] | None
    load_after: list[float] | None
    passes: int  # every batch clocked once per pass
    order: str
    noisy_cv: float  # the threshold of the passes' spread
    step_noisy_cv: float  # the threshold of the steps' spread within a pass (timing.STEP_NOISY_CV)
    doubts: list[str]  # every batch's doubts together
    verdict: str  # the table's: "ok", "noisy" or "untrusted" (mminfer.timing.verdict_of)
    batches: list[BatchStep]
    fit: ServeFit
    nearly_free: float
    nearly_free_up_to: int  # the largest batch reached while each doubling stayed nearly free
    peak_batch: int  # the batch with the most tokens per second
    peak_tokens_per_second: float
    peak_gain: float  # peak tokens per second / the smallest batch's
    growth_per_doubling: float  # serve.growth_per_doubling
    growth_stops_at: int  # from this batch on, no doubling raised tokens per second by that much
    growth_stops_within: bool  # False: it still grew so at the largest batch measured
    growth_stops_step_s: float  # the decode step at growth_stops_at
    cliffs: list[Cliff]
    caches: list[CacheLevel]
    caches_source: str
    users: UsersBound
    run: RunInfo


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
        hints = typing.get_type_hints(kind)
        names = [field.name for field in dataclasses.fields(kind)]
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
