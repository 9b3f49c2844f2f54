"""Step 7: report.md, in Korean, from the records the other rules wrote.

Python decides the facts and verdicts of each section: one ``<name>_facts`` function per
measurement (mminfer.measurements names it), whose parameters are named after the measurements
whose records it reads, so render_report hands each its records by name. Every Korean sentence
lives in a template: report/report.md.j2 includes report/sections/<name>.md.j2 per measurement in
order, and a sentence chooses its words only by a boolean or an enum given here. Every number is
read from the result files' records (mminfer.records); nothing is measured or assumed here.
"""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Mapping
from pathlib import Path

import jinja2

from mminfer.korean import particle
from mminfer.measurements import MEASUREMENTS
from mminfer.records import (
    Capacity,
    Count,
    KvBytes,
    Same,
    SamplerCheck,
    Serve,
    Sweep,
    Temperatures,
    Timing,
    TopP,
    TopPDetail,
)

TEMPLATE = Path(__file__).resolve().parents[1] / "report" / "report.md.j2"

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


# --- formatting: the template's filters ----------------------------------------------------------


def fmt_bytes(n: int) -> str:
    if n >= 1 << 30:
        return f"{n:,} B ({n / (1 << 30):.2f} GiB)"
    if n >= 1 << 20:
        return f"{n:,} B ({n / (1 << 20):.2f} MiB)"
    if n >= 1 << 10:
        return f"{n:,} B ({n / (1 << 10):.1f} KiB)"
    return f"{n:,} B"


def fmt_ms(seconds: float | None) -> str:
    return "—" if seconds is None else f"{seconds * 1000:.2f} ms"


def thousands(n: int | None) -> str:
    return "—" if n is None else f"{n:,}"


# The template's other filters; fmt takes Python's format spec: {{ speedup|fmt(".2f") }}.
FILTERS = {
    "us": lambda seconds: f"{seconds * 1e6:.3g} µs",
    "ns": lambda seconds: f"{seconds * 1e9:.3g} ns",
    "percent": lambda value, digits=1: "—" if value is None else f"{value * 100:.{digits}f}%",
    "fmt": lambda value, spec: "—" if value is None else format(value, spec),
    "cell": lambda text: text.replace("|", "\\|").replace("\n", " "),  # one markdown table cell
    "particle": particle,  # {{ b | particle("은/는") }}: "32는", as the number is read (korean.py)
}


def table_row(*cells) -> str:
    """One Markdown table row: ``{{ row(a, b, c) }}`` is "| a | b | c |" (a template's long row,
    one cell per line)."""
    return "| " + " | ".join(str(cell) for cell in cells) + " |"


# --- facts and verdicts, one function per section ------------------------------------------------


def yarn_of(config: dict) -> str:
    """What MiniMind's YaRN does to this model's angles: "none" (no rope_scaling), "unchanged"
    (a rotary table no longer than the original positions: only attention_factor applies) or
    "scaled"."""
    scaling = config.get("rope_scaling")
    if not scaling:
        return "none"
    if config["max_position_embeddings"] <= scaling["original_max_position_embeddings"]:
        return "unchanged"
    return "scaled"


def run_facts(same: Same, temp: Temperatures) -> dict:
    """Which model, checkpoints, backend and device produced the numbers, from which inputs."""
    pretrain = same.run
    if pretrain.device == "cuda":
        device = pretrain.device_name
    else:
        device = "cpu"
    return {
        "pretrain": pretrain,
        "sft": next(iter(temp.values())).run,
        "device": device,
        "prompt": same.prompt,
        "yarn": yarn_of(pretrain.config),
    }


def same_facts(same: Same) -> dict:
    """same.json: the same ids? If not, where they part and whether rounding explains it."""
    if same.same_ids:
        rounding = None
    else:
        difference = same.first_difference
        rounding = within_rounding(
            difference.max_abs_logit_diff, difference.max_abs_logit, same.run.dtype
        )
    return {
        "same_ids": same.same_ids,
        "prompt_len": same.prompt_len,
        "new_tokens": same.new_tokens,
        "max_abs_logit_diff": same.max_abs_logit_diff,
        "logits_equal": same.max_abs_logit_diff == 0,
        "first_difference": same.first_difference,
        "rounding_sized": rounding,
    }


def token_ratio(fed: Count) -> float:
    """How many times more tokens the uncached path feeds (fed_without_cache / fed_with_cache)."""
    return fed.fed_without_cache / fed.fed_with_cache


def fed_facts(fed: Count) -> dict:
    """count.json: the tokens fed both ways (the formulas' values are in the record)."""
    return vars(fed) | {"token_ratio": token_ratio(fed)}


def time_facts(time: Timing, fed: Count) -> dict:
    """time.json and its verdict (see mminfer.timing): ok, noisy, or untrusted."""
    ratio = token_ratio(fed)
    return vars(time) | {
        "token_ratio": ratio,
        "trusted": time.verdict != "untrusted",
        "speedup_below_token_ratio": time.speedup < ratio,
        "took_extra_rounds": time.extra_rounds > 0,
    }


def kvbytes_facts(kvbytes: KvBytes) -> dict:
    return vars(kvbytes) | {
        "bytes_match": kvbytes.measured_bytes == kvbytes.formula_bytes,
        "k_shape": tuple(kvbytes.k_shape),
        # how much larger the cache would be after repeat_kv
        "repeat": kvbytes.heads // kvbytes.kv_heads,
    }


def temp_facts(temp: Temperatures) -> dict:
    first = next(iter(temp.values()))
    distinct = [summary.distinct for summary in temp.values()]
    return {
        "question": first.prompt.question,
        "template": first.prompt.template,
        "tokenizers_template": first.prompt.template == "tokenizer_config.json",
        "seed": first.prompt.seed,
        "samples": first.samples,
        "by_temperature": temp,
        "distinct_grows": all(a < b for a, b in itertools.pairwise(distinct)),
    }


def sampler_facts(sampler: SamplerCheck) -> dict:
    """sampler.json: all answers identical with and without the cache (one seed)?"""
    return vars(sampler) | {
        "all_identical": sampler.identical_with_and_without_cache == sampler.samples,
        "seed_changes_answers": sampler.differ_with_second_seed > 0,
        "differing": sampler.samples - sampler.identical_with_and_without_cache,
        "same_with_second_seed": sampler.samples - sampler.differ_with_second_seed,
        # float32 on a CPU: the two paths' rounding rarely parts a draw, so a difference there
        # points at the cached path
        "float32_on_cpu": sampler.run.dtype == "float32" and sampler.run.device == "cpu",
    }


def topp_facts(topp: TopP, topp_detail: TopPDetail | None = None) -> dict:
    """Survivors per p after the open prefix; with topp_detail.json, the sharp position beside."""
    detail = topp_detail
    if detail is None:  # a plain run of the task writes topp.json only
        return {"survivors": topp, "open": None, "sharp": None, "open_sharper": None}
    open_position = detail.positions["open"]
    sharp = detail.positions["sharp"]
    more_at_every_p = all(n > sharp.survivors[p] for p, n in topp.items())
    return {
        "survivors": topp,
        "open": open_position,
        "sharp": sharp,
        "open_sharper": more_at_every_p,
    }


SWEEP_RUN_DOUBTS = ("with_cache_spread", "without_cache_spread")  # between the runs
SWEEP_STEP_DOUBTS = ("with_cache_spread_within_runs", "without_cache_spread_within_runs")


def sweep_facts(sweep: Sweep) -> dict:
    points, fit = sweep.points, sweep.fit
    longest = points[-1]
    steps_with = sweep.steps.with_cache_s
    steps_without = sweep.steps.without_cache_s
    at_longest = None
    for row in sweep.predictions:
        if row.new_tokens == sweep.longest:
            at_longest = row
    furthest = sweep.predictions[-1]
    all_steps = min(sweep.all_steps_up_to, sweep.longest)
    clocked = sum(seconds is not None for seconds in steps_without)
    last_step = max(step for step, seconds in enumerate(steps_without) if seconds is not None)
    last_clocked = steps_without[last_step]
    counts_match = True
    for point in points:
        counts_match &= point.fed_with_cache == point.formula_with_cache
        if point.fed_without_cache is not None:
            counts_match &= point.fed_without_cache == point.formula_without_cache
    # a cached step after the prefill: the mean over all of them (sweep.py), not one noisy step
    if sweep.decode_s_per_token is None:
        cached_step_s = steps_with[0]
    else:
        cached_step_s = sweep.decode_s_per_token
    if fit.per_token_s > 0:
        fixed_in_tokens = fit.fixed_s_with_cache / fit.per_token_s
    else:
        fixed_in_tokens = None
    return vars(sweep) | {
        "counts_match": counts_match,
        "longest_point": longest,
        "first_step_without_cache_s": steps_without[0],
        "last_step_without_cache_s": last_clocked,
        "last_clocked_step": last_step,
        "uncached_steps_grow": last_clocked > steps_without[0],
        "uncached_all_steps": all_steps,
        "uncached_spread_clocked": clocked - all_steps,
        "partly_fitted": any(point.fed_without_cache is None for point in points),
        "interpolated": any(point.without_cache_from == "interpolation" for point in points),
        "unfilled": any(point.without_cache_from == "none" for point in points),
        "single_run": "single_run" in sweep.doubts,
        "runs_spread": any(doubt in sweep.doubts for doubt in SWEEP_RUN_DOUBTS),
        "steps_spread": any(doubt in sweep.doubts for doubt in SWEEP_STEP_DOUBTS),
        "cached_step_s": cached_step_s,
        "cache_not_faster": "cache_not_faster" in sweep.doubts,  # decided in sweep.spread_doubts
        "fit_holds": fit.holds,
        "fixed_share_at_longest": None if at_longest is None else at_longest.fixed_share_with_cache,
        "fixed_in_tokens": fixed_in_tokens,  # the fixed cost of a cached step, in tokens' worth
        "extrapolated": None if furthest.measured else furthest,
        "rows": sweep_rows(sweep),
        "last_step_before_longest": last_step != sweep.longest - 1,
        "time_below_tokens": (
            longest.time_ratio is not None and longest.time_ratio < longest.token_ratio
        ),
    }


def sweep_rows(sweep: Sweep) -> list[dict]:
    """The table's rows: each length, and how its uncached time is marked.

    ``mark`` before the time: "≈" where some steps came from the fit; ``after`` it: "†" where they
    were interpolated between clocked steps; ``hidden``: no time could be filled in (—).
    """
    rows = []
    for point in sweep.points:
        how = point.without_cache_from
        rows.append(
            {
                "point": point,
                "hidden": how == "none",
                "mark": "≈" if how == "fit" else "",
                "after": "†" if how == "interpolation" else "",
            }
        )
    return rows


def capacity_facts(capacity: Capacity) -> dict:
    by_key = {}
    for row in capacity.rows:
        by_key[(row.dtype, row.context, row.memory_gib)] = row.sequences
    table = []
    for dtype in capacity.bytes_per_token:
        for context in capacity.contexts:
            sequences = [by_key[(dtype, context, memory)] for memory in capacity.memory_gib]
            table.append((dtype, context, sequences))
    return vars(capacity) | {
        "table": table,
        "batch_matches": capacity.batch_check.matches,
        "moe": capacity.experts is not None,
    }


SPREAD_DOUBTS = ("decode_spread", "prefill_spread")  # between the passes


def serve_facts(serve: Serve) -> dict:
    """serve.json: how far to trust the table, where tokens per second peak and stop growing,
    whether batching is nearly free or only still pays, the cliffs, which bound binds and why."""
    rows = serve.batches
    users = serve.users
    by_batch = {row.batch: row for row in rows}
    first = rows[0]
    top = by_batch[serve.peak_batch]
    lower_bound = users.speed_how == "lower bound"
    experts = [row.experts_touched for row in rows if row.experts_touched is not None]
    spread_batches = []
    within_batches = []
    contradicting_batches = []
    for row in rows:
        if any(doubt in SPREAD_DOUBTS for doubt in row.doubts):
            spread_batches.append(row.batch)
        if "decode_spread_within_passes" in row.doubts:
            within_batches.append(row.batch)
        if row.verdict == "untrusted":
            contradicting_batches.append(row.batch)
    fit = serve.fit
    outside_fit = [row.batch for row in rows if row.batch > fit.fitted_batches[1]]
    return vars(serve) | {
        "kv_match": all(row.kv_bytes_match for row in rows),
        "first": first,
        "last": rows[-1],
        "binding": users.binding,
        "speed_lower_bound": lower_bound,
        "memory_known": users.users_by_memory is not None,
        "experts": experts if experts else None,
        "experts_grow": bool(experts) and experts[-1] > experts[0],
        "free_below_last": serve.nearly_free_up_to < rows[-1].batch,
        "context_cut": serve.context_asked > users.context,
        "context_beyond_measured": users.context > serve.decode_context,
        # a fixed cost of 0 gives no crossover worth naming
        "crossover_known": bool(serve.fit.crossover_batch),
        "spread_batches": spread_batches,  # the passes' medians spread over noisy_cv
        "within_batches": within_batches,  # the steps inside the passes spread over noisy_cv
        "largest_cv_within": max(row.cv_within_passes for row in rows),
        "contradicting_batches": contradicting_batches,  # faster than a smaller batch
        "largest_cv": max(row.cv_decode_step for row in rows),
        "nearly_free_region": serve.nearly_free_up_to > first.batch,
        "nearly_free_row": by_batch[serve.nearly_free_up_to],
        "peak": top,
        "peak_is_first": top.batch == first.batch,
        # batching pays past where it is nearly free: tokens per second grow up to the peak
        "still_pays": top.batch > serve.nearly_free_up_to and top.batch != first.batch,
        "single_pass": "single_pass" in serve.doubts,
        "fit_too_few": len(rows) < fit.least_batches,
        "outside_fit": outside_fit,
        "cliff_rows": [(by_batch[c.from_batch], by_batch[c.to_batch], c) for c in serve.cliffs],
        "caches_known": bool(serve.caches),
    }


# --- rendering -----------------------------------------------------------------------------------


def environment(folder: Path = TEMPLATE.parent) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(folder),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(FILTERS, fmt_bytes=fmt_bytes, ms=fmt_ms, thousands=thousands)
    env.globals["row"] = table_row
    return env


def section_facts(function, records: Mapping[str, object]) -> dict:
    """A section's facts: ``function`` called with the records its parameters name.

    A facts function's parameters are measurement names (``time_facts(time, fed)``); a record the
    report was not given is None. A parameter that names no measurement is an error (a typo would
    otherwise read as a record never given).
    """
    names = {entry.name for entry in MEASUREMENTS}
    arguments = {}
    for parameter in inspect.signature(function).parameters:
        if parameter not in names:
            raise KeyError(
                f"{function.__name__}'s parameter {parameter!r} names no measurement "
                f"(mminfer.measurements): {sorted(names)}"
            )
        arguments[parameter] = records.get(parameter)
    return function(**arguments)


def render_report(
    records: Mapping[str, object],
    pictures: dict | None = None,
    cache_script: str | None = None,
    template=TEMPLATE,
) -> str:
    """report.md from the records, keyed by measurement name (mminfer.measurements).

    The rule passes every measurement; a plain run of the task (scripts/plain_task.py) only the
    six task files, and the report leaves out the sections of what is absent. ``pictures`` maps
    each picture to a PNG path relative to the report, ``cache_script`` is the task's cache.py
    relative to it; ``template`` is the rule's template input (report/report.md.j2, which
    includes report/sections/ beside it).
    """
    missing = [entry.name for entry in MEASUREMENTS if entry.task and entry.name not in records]
    if missing:
        raise KeyError(f"render_report needs the task's measurements; missing {missing}")
    facts = {
        "run": section_facts(run_facts, records),
        "cache_script": cache_script,
        "pictures": pictures,
    }
    sections = []
    for entry in MEASUREMENTS:
        if entry.section is None or entry.name not in records:
            continue
        facts[entry.name] = section_facts(entry.facts_function(), records)
        sections.append(entry.section)
    facts["sections"] = sections
    template = Path(template)
    env = environment(template.parent)
    return unwrap(env.get_template(template.name).render(facts)).rstrip() + "\n"


def starts_a_block(line: str) -> bool:
    """A line Markdown never joins to the one before: blank, a heading, a table row, a picture,
    a list item."""
    stripped = line.strip()
    return stripped == "" or stripped.startswith(("#", "|", "![", "- "))


def ends_a_block(line: str) -> bool:
    """A line Markdown never joins the next one to: blank, a heading, a table row, a picture."""
    stripped = line.strip()
    return stripped == "" or stripped.startswith(("#", "|", "!["))


def unwrap(text: str) -> str:
    """The templates' wrapped prose as Markdown reads it: each paragraph (and list item) on one
    line, its lines joined by a space. Headings, tables, pictures and blank lines stay as they
    are."""
    lines = []
    for line in text.split("\n"):
        if lines and not starts_a_block(line) and not ends_a_block(lines[-1]):
            lines[-1] = lines[-1] + " " + line.strip()
        else:
            lines.append(line)
    return "\n".join(lines)
