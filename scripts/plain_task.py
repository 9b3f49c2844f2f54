"""The task's seven outputs from one plain process: the benchmark's yardstick (not a rule script).

    python scripts/plain_task.py --outdir O [--config config.yaml more.yaml ...] [--threads N]

The plainest honest version of the task, through mminfer's own functions: one process, each
checkpoint loaded once, the task's steps in order (same.json and count.json, time.json, kvbytes.json,
temp.json, topp.json, report.md), nothing beyond the task. The inputs (course files or the demo's),
how the model is loaded and the task's values (prompt sizes, timing runs, seeds, question,
temperatures, p) come from the same config files as the workflow's, resolved the same way, so both
do the same work. scripts/benchmark.py times this against the workflow.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from mminfer import greedy, kvcache, prompts, sampling, timing  # noqa: E402
from mminfer.inputs import model_params, parsed_config, resolve_inputs  # noqa: E402
from mminfer.io import write_json, write_text_atomic  # noqa: E402
from mminfer.jobs import open_model, run_info, task_prompt  # noqa: E402
from mminfer.loading import ModelSpec  # noqa: E402
from mminfer.report import render_report  # noqa: E402
from mminfer.tokenizer import check_vocab_fits, load_tokenizer  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--outdir", required=True, help="where the seven outputs go")
    parser.add_argument(
        "--config",
        nargs="+",
        default=[str(REPO / "config.yaml")],
        help="config files, later ones winning, as the workflow's --configfile (default: config.yaml)",
    )
    parser.add_argument(
        "--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)"
    )
    args = parser.parse_args()
    config = parsed_config(*args.config)  # the schema's defaults under what the files set
    inputs = resolve_inputs(config)  # the course files or the demo's, as the workflow decides
    outdir = Path(args.outdir)
    cache, time_cfg, kv, temp, topp = (
        config[key] for key in ("cache", "time", "kvbytes", "temp", "topp")
    )

    tokenizer = load_tokenizer(inputs["tokenizer"])
    model_spec = ModelSpec(
        **model_params(config, inputs["model_set"])
    )  # as the workflow's rules load it
    pretrained = open_model(
        inputs["pretrain"], model_spec, args.threads
    )  # the rules' loading and checks
    check_vocab_fits(
        tokenizer,
        pretrained.config.vocab_size,
        inputs["pretrain"],
        "pretrain",
        model_spec.model_set,
    )
    pre_info = run_info(pretrained)
    model, device = pretrained.model, pretrained.device

    # steps 1-2: same tokens with and without the cache; tokens fed
    prompt_ids = task_prompt(
        pretrained,
        tokenizer,
        inputs["val_data"],
        cache["docs"],
        cache["prompt_tokens"],
        cache["new_tokens"],
        "cache.prompt_tokens + cache.new_tokens",
    )
    same, count = greedy.compare_cache(model, prompt_ids, cache["new_tokens"], device)
    same["run"] = count["run"] = pre_info
    write_json(outdir / "same.json", same)
    write_json(outdir / "count.json", count)

    # step 3: time
    timed = timing.time_cache(
        model,
        prompt_ids,
        cache["new_tokens"],
        time_cfg["warmup"],
        time_cfg["runs"],
        time_cfg["max_runs"],
        device,
    )
    write_json(outdir / "time.json", timed)

    # step 4: the cache's bytes
    kv_bytes = kvcache.measure_kv_bytes(model, pretrained.config, kv["tokens"], kv["seed"], device)
    kv_bytes["seed"] = kv["seed"]
    write_json(outdir / "kvbytes.json", kv_bytes)

    # step 6 (the pretrained model is loaded now): top-p survivors after [bos] + prefix
    logits = sampling.next_token_logits(
        model, prompts.prefix_prompt(tokenizer, topp["prefix"]), device
    )
    survivors = sampling.survivors_by_p(logits, topp["ps"])
    write_json(outdir / "topp.json", survivors)

    # step 5: distinct answers of the SFT model per temperature
    sft = open_model(inputs["sft"], model_spec, None)  # threads already set
    check_vocab_fits(tokenizer, sft.config.vocab_size, inputs["sft"], "sft", model_spec.model_set)
    question_ids = prompts.chat_prompt(tokenizer, temp["question"])
    answers = sampling.temperature_experiment(
        sft.model,
        tokenizer,
        question_ids,
        temp["temperatures"],
        temp["samples"],
        temp["new_tokens"],
        temp["seed"],
        sft.device,
    )
    sft_info = run_info(sft, question=temp["question"], seed=temp["seed"])
    for summary in answers.values():
        summary["run"] = sft_info
    write_json(outdir / "temp.json", answers)

    # step 7: the report
    write_text_atomic(
        outdir / "report.md", render_report(same, count, timed, kv_bytes, answers, survivors)
    )


if __name__ == "__main__":
    main()
