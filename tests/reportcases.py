"""Reports rendered from hand-made records whose text is pinned in tests/data/report/<case>.md.

Each case is render_report's records, keyed by measurement name (mminfer.measurements), with the
pictures and the task's script when the rule would pass them. The golden files were rendered by
the code before the report was split into sections (one template, keyword arguments); the test
(tests/test_report_golden.py) renders each case with today's code and compares the text with
wrapped lines joined, so a change of wording shows as a failing case, never slips by.
"""

from __future__ import annotations

from reportdata import (
    RUN,
    capacity_record,
    count_record,
    differing,
    kv_record,
    same_record,
    sampler_record,
    serve_record,
    sweep_record,
    temp_record,
    time_record,
    topp_detail_record,
    topp_record,
)

from mminfer.records import from_json, to_json
from mminfer.records.serve import Serve
from mminfer.records.sweep import Sweep
from mminfer.records.temp import Temperatures

PICTURES = {
    "sweep": "sweep.png",
    "temp": "temp.png",
    "topp": "topp.png",
    "serve": "serve.png",
}


def task() -> dict:
    """The six task files (scripts/plain_task.py)."""
    return {
        "same": same_record(),
        "fed": count_record(),
        "time": time_record(),
        "kvbytes": kv_record(),
        "temp": temp_record(),
        "topp": topp_record(),
    }


def every() -> dict:
    """Every file the report rule reads."""
    return task() | {
        "topp_detail": topp_detail_record(),
        "sampler": sampler_record(),
        "sweep": sweep_record(),
        "capacity": capacity_record(),
        "serve": serve_record(),
    }


def serve_with(**changes) -> Serve:
    data = to_json(serve_record())
    data.update(changes)
    return from_json(Serve, data)


def serve_moe(last_experts: float) -> Serve:
    data = to_json(serve_record(binding="not reached", users_by_speed=64, how="lower bound"))
    for row in data["batches"]:
        row["experts_touched"] = 1.0
    data["batches"][-1]["experts_touched"] = last_experts
    data["nearly_free_up_to"] = 64
    data["context_asked"] = 4096
    data["left_out_by_cap"] = [128, 256]
    return from_json(Serve, data)


def sweep_partly_fitted(holds: bool, spread: bool) -> Sweep:
    data = to_json(sweep_record(holds=holds))
    steps = data["steps"]
    steps["without_cache_s"] = (
        steps["without_cache_s"][:8]
        + [None] * 7
        + ([steps["without_cache_s"][15]] if spread else [None])
    )
    steps["fed_without_cache"] = (
        steps["fed_without_cache"][:8] + [None] * 7 + ([32] if spread else [None])
    )
    data["points"][1]["fed_without_cache"] = None
    data["uncached_ids_match"] = False
    data["fit"]["held_at_zero"] = ["per_pair_s"]
    data["load_before"] = [1.5, 1.0, 0.5]
    data["load_after"] = [2.0, 1.0, 0.5]
    return from_json(Sweep, data)


def chatml_temp(distinct=(10, 10, 29)) -> Temperatures:
    data = to_json(temp_record(distinct))
    lora = {"path": "lora.pth", "sha256": "cd" * 32, "rank": 8, "modules": 24, "parameters": 9000}
    for summary in data.values():
        summary["prompt"]["template"] = "ChatML"
        summary["run"]["lora"] = lora
        summary["answers"][0]["answer"] = "유자|차\n입니다."
    return from_json(Temperatures, data)


def moe_yarn_cuda_run(angles_change: bool) -> dict:
    config = RUN["config"] | {
        "use_moe": True,
        "num_experts": 4,
        "num_experts_per_tok": 1,
        "moe_intermediate_size": 640,
        "tie_word_embeddings": False,
        "rope_scaling": {
            "factor": 16,
            "original_max_position_embeddings": 2048,
            "beta_fast": 32,
            "beta_slow": 1,
            "attention_factor": 1.0,
        },
        "max_position_embeddings": 32768 if angles_change else 512,
    }
    return RUN | {
        "config": config,
        "device": "cuda",
        "device_name": "NVIDIA H200",
        "dtype": "bfloat16",
        "model_set": "minimind-3",
        "active_parameters": 1_500_000,
    }


def cases() -> dict[str, dict]:
    """Case name -> {"records": ..., "pictures": ..., "cache_script": ...}."""
    full = {"records": every(), "pictures": PICTURES, "cache_script": "cache.py"}
    plain = {"records": task(), "pictures": None, "cache_script": None}
    differing_untrusted = every() | {
        "same": differing(margin=49.5, diff=50.0),
        "time": time_record(verdict="untrusted", speedup=0.8, load_before=None),
        "temp": temp_record((10, 10, 29)),
        "topp_detail": topp_detail_record(sharp=(1, 1, 155)),
        "sampler": sampler_record(identical=27),
        "sweep": sweep_record(holds=False, time_ratio=0.9, step_growth=-0.0001),
        "capacity": capacity_record(matches=False),
        "serve": serve_record(binding="memory", users_by_memory=20),
    }
    rounding_noisy = every() | {
        "same": differing(margin=1e-6, diff=2e-6),
        "time": time_record(verdict="noisy", speedup=60.0, runs_done=9),
        "kvbytes": kv_record(measured_bytes=409600, allocator_bytes=3 << 20),
        "sweep": sweep_partly_fitted(holds=True, spread=False),
        "serve": serve_moe(last_experts=3.5),
    }
    ok_extra_rounds = every() | {
        "same": same_record(max_abs_logit_diff=0.0),
        "time": time_record(extra_rounds=2, runs_done=5),
        "temp": chatml_temp(),
        "sweep": sweep_partly_fitted(holds=False, spread=True),
        "serve": serve_moe(last_experts=1.0),
        "sampler": sampler_record(identical=30, differ=0),
    }
    moe_run = moe_yarn_cuda_run(angles_change=True)
    moe = every() | {
        "same": same_record(run=moe_run),
        "sweep": sweep_record(time_ratio=30.0, per_token_s=0.0, extrapolated=False),
        "serve": serve_with(nearly_free_up_to=64),
    }
    yarn_flat = task() | {
        "same": same_record(run=moe_yarn_cuda_run(angles_change=False)),
        "time": time_record(verdict="untrusted", speedup=0.8),
    }
    sampler_gpu = every() | {
        "sampler": from_json(
            type(sampler_record()),
            to_json(sampler_record(identical=28)) | {"run": RUN | {"device": "cuda"}},
        ),
    }
    plain_differing = task() | {
        "same": differing(margin=1e-6, diff=2e-6),
        "time": time_record(verdict="untrusted", speedup=0.8),
    }
    return {
        "full": full,
        "plain": plain,
        "differing_untrusted": {**full, "records": differing_untrusted},
        "rounding_noisy": {**full, "records": rounding_noisy},
        "ok_extra_rounds": {**full, "records": ok_extra_rounds},
        "moe": {**full, "records": moe},
        "yarn_flat_untrusted": {**plain, "records": yarn_flat},
        "sampler_gpu": {**full, "records": sampler_gpu},
        "plain_differing": {**plain, "records": plain_differing},
    }


def write_golden() -> None:
    """Render every case with today's code into tests/data/report/ (after a wording change on
    purpose: read the diff before committing it)."""
    from pathlib import Path

    from mminfer.report import render_report

    folder = Path(__file__).resolve().parent / "data" / "report"
    for name, case in cases().items():
        text = render_report(case["records"], case["pictures"], case["cache_script"])
        (folder / f"{name}.md").write_text(text, encoding="utf-8")


if __name__ == "__main__":  # PYTHONPATH=.:tests python tests/reportcases.py
    write_golden()
