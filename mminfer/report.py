"""Step 7: report.md, in Korean, from the JSON files the other rules wrote.

Python decides the facts and verdicts of each section (``*_facts``: is it the same ids, is the
difference rounding-sized, can the timing be trusted, ...); every Korean sentence lives in the
template ``report/report.md.j2``, which a reader can edit without touching this module. Every number
is read from the JSON files; nothing is measured or assumed here.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import jinja2

from mminfer.io import read_json, write_text_atomic

log = logging.getLogger("mminfer")

TEMPLATE = Path(__file__).resolve().parents[1] / "report" / "report.md.j2"

# Relative logit differences that rounding alone produces between the two attention paths, per dtype
# (a generous bound: float32 agrees to ~1e-6 relative, half precision to ~1e-2).
ROUNDING_TOLERANCE = {"float32": 1e-3, "bfloat16": 1e-1, "float16": 2e-2}


# --- formatting: the template's filters ----------------------------------------------------------


def fmt_bytes(n: int) -> str:
    if n >= 1 << 20:
        return f"{n:,} B ({n / (1 << 20):.2f} MiB)"
    if n >= 1 << 10:
        return f"{n:,} B ({n / (1 << 10):.1f} KiB)"
    return f"{n:,} B"


def fmt_ms(seconds: float | None) -> str:
    return "—" if seconds is None else f"{seconds * 1000:.2f} ms"


def thousands(n: int | None) -> str:
    return "—" if n is None else f"{n:,}"


FILTERS = {  # the template's other filters; fmt takes Python's format spec: {{ speedup|fmt(".2f") }}
    "us": lambda seconds: f"{seconds * 1e6:.3g} µs",
    "ns": lambda seconds: f"{seconds * 1e9:.3g} ns",
    "percent": lambda value, digits=1: "—" if value is None else f"{value * 100:.{digits}f}%",
    "fmt": lambda value, spec: "—" if value is None else format(value, spec),
    "cell": lambda text: text.replace("|", "\\|").replace("\n", " "),  # one markdown table cell
}


# --- facts and verdicts, one function per section ------------------------------------------------


def run_facts(same: dict, temp: dict) -> dict:
    """Which model, checkpoints, backend and device produced the numbers."""
    pretrain = same["run"]
    return {
        "pretrain": pretrain,
        "sft": next(iter(temp.values()))["run"],
        "device": pretrain["device_name"] if pretrain["device"] == "cuda" else "cpu",
        # the workflow's cache job records these; a plain run of the task does not
        "tokenizer": pretrain.get("tokenizer", ""),
        "val_data": pretrain.get("val_data", ""),
        "docs": pretrain.get("docs", "?"),
    }


def rounding_sized(difference: dict, dtype: str) -> bool:
    """Is the logit difference between the paths at the first differing step no larger than rounding?"""
    scale = 1.0 + difference.get("max_abs_logit", 0.0)
    return difference["max_abs_logit_diff"] <= ROUNDING_TOLERANCE.get(dtype, 1e-1) * scale


def same_facts(same: dict) -> dict:
    """same.json: the same ids? If not, where they part and whether rounding explains it."""
    difference = same["first_difference"]
    return {
        "same_ids": same["same_ids"],
        "max_abs_logit_diff": same["max_abs_logit_diff"],
        "logits_equal": same["max_abs_logit_diff"] == 0,
        "first_difference": difference,
        "rounding_sized": None
        if same["same_ids"]
        else rounding_sized(difference, same["run"]["dtype"]),
    }


def count_facts(count: dict) -> dict:
    return count | {"token_ratio": count["fed_without_cache"] / count["fed_with_cache"]}


def time_facts(timing: dict, token_ratio: float) -> dict:
    """time.json and its verdict (see mminfer.timing): ok, noisy, or untrusted (cache side not faster)."""
    return timing | {
        "token_ratio": token_ratio,
        "trusted": timing["verdict"] != "untrusted",
        "speedup_below_token_ratio": timing["speedup"] < token_ratio,
    }


def kvbytes_facts(kv: dict) -> dict:
    return kv | {
        "bytes_match": kv["measured_bytes"] == kv["formula_bytes"],
        "k_shape": tuple(kv["k_shape"]),
        "repeat": kv["heads"]
        // kv["kv_heads"],  # how much larger the cache would be after repeat_kv
    }


def temp_facts(temp: dict) -> dict:
    first = next(iter(temp.values()))
    distinct = [summary["distinct"] for summary in temp.values()]
    return {
        "question": first["run"]["question"],
        "seed": first["run"]["seed"],
        "samples": first["samples"],
        "by_temperature": temp,
        "distinct_grows": all(a < b for a, b in zip(distinct, distinct[1:])),
    }


def topp_facts(topp: dict, detail: dict | None) -> dict:
    """Survivors per p after the open prefix; with topp_detail.json, the sharp position beside them."""
    if detail is None:  # a plain run of the task writes topp.json only
        return {"survivors": topp, "open": None, "sharp": None, "open_sharper": None}
    open_position, sharp = detail["positions"]["open"], detail["positions"]["sharp"]
    return {
        "survivors": topp,
        "open": open_position,
        "sharp": sharp,
        "open_sharper": all(
            n > sharp["survivors"][p] for p, n in topp.items()
        ),  # more candidates at every p
    }


def sweep_facts(sweep: dict) -> dict:
    points, fit = sweep["points"], sweep["fit"]
    longest = points[-1]
    steps_with, steps_without = sweep["steps"]["with_cache_s"], sweep["steps"]["without_cache_s"]
    at_longest = next(
        (row for row in sweep["predictions"] if row["new_tokens"] == sweep["longest"]), None
    )
    furthest = sweep["predictions"][-1]
    return sweep | {
        "counts_match": all(
            p["fed_with_cache"] == p["formula_with_cache"]
            and p["fed_without_cache"] == p["formula_without_cache"]
            for p in points
        ),
        "longest_point": longest,
        "first_step_without_cache_s": steps_without[0],
        "last_step_without_cache_s": steps_without[-1],
        "uncached_steps_grow": steps_without[-1] > steps_without[0],
        # a cached step after the prefill: the mean over all of them (sweep.py), not one noisy step
        "cached_step_s": steps_with[0]
        if sweep["decode_s_per_token"] is None
        else sweep["decode_s_per_token"],
        "cache_not_faster": longest["new_tokens"] > 1 and longest["time_ratio"] <= 1,
        "fit_holds": fit["holds"],
        "fixed_share_at_longest": None
        if at_longest is None
        else at_longest["fixed_share_with_cache"],
        # the fixed cost of one cached step, in tokens' worth of per-token cost
        "fixed_in_tokens": fit["fixed_s_with_cache"] / fit["per_token_s"]
        if fit["per_token_s"] > 0
        else None,
        "extrapolated": None if furthest["measured"] else furthest,
    }


def capacity_facts(capacity: dict) -> dict:
    by_key = {
        (row["dtype"], row["context"], row["memory_gib"]): row["sequences"]
        for row in capacity["rows"]
    }
    table = [
        (dtype, context, [by_key[(dtype, context, memory)] for memory in capacity["memory_gib"]])
        for dtype in capacity["bytes_per_token"]
        for context in capacity["contexts"]
    ]
    return capacity | {"table": table, "batch_matches": capacity["batch_check"]["matches"]}


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
    return env


def render_report(
    same: dict,
    count: dict,
    timing: dict,
    kv: dict,
    temp: dict,
    topp: dict,
    topp_detail: dict | None = None,
    sweep: dict | None = None,
    capacity: dict | None = None,
    pictures: dict | None = None,
    cache_script: str | None = None,
    template=TEMPLATE,
) -> str:
    """report.md. The rule passes everything; a plain run of the task (scripts/plain_task.py) only the
    six task files, and the template leaves out what is absent. ``pictures`` maps sweep/temp/topp to a
    PNG path relative to the report, ``cache_script`` is the task's cache.py relative to it; ``template``
    is the rule's template input."""
    counted = count_facts(count)
    facts = {
        "run": run_facts(same, temp),
        "cache_script": cache_script,
        "same": same_facts(same),
        "count": counted,
        "time": time_facts(timing, counted["token_ratio"]),
        "kv": kvbytes_facts(kv),
        "temp": temp_facts(temp),
        "topp": topp_facts(topp, topp_detail),
        "sweep": sweep_facts(sweep) if sweep else None,
        "capacity": capacity_facts(capacity) if capacity else None,
        "pictures": pictures,
    }
    template = Path(template)
    return environment(template.parent).get_template(template.name).render(facts).rstrip() + "\n"


def relative_to(path, folder: Path) -> str:
    return Path(os.path.relpath(Path(path).resolve(), folder.resolve())).as_posix()


def report_job(inputs: dict, out) -> str:
    """Read the files the rule names in ``inputs`` and write report.md to ``out`` (PNGs and cache.py
    linked relatively)."""
    folder = Path(out).parent
    read = {
        name: read_json(inputs[name])
        for name in (
            "same",
            "counts",
            "time",
            "kvbytes",
            "temp",
            "topp",
            "topp_detail",
            "sweep",
            "capacity",
        )
    }
    pictures = {
        name: relative_to(inputs[f"{name}_png"], folder) for name in ("sweep", "temp", "topp")
    }
    text = render_report(
        read["same"],
        read["counts"],
        read["time"],
        read["kvbytes"],
        read["temp"],
        read["topp"],
        read["topp_detail"],
        read["sweep"],
        read["capacity"],
        pictures,
        relative_to(inputs["cache_script"], folder),
        inputs["template"],
    )
    write_text_atomic(out, text)
    log.info("wrote %s (%d lines)", out, text.count("\n"))
    return text
