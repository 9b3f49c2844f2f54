"""The task's seven outputs from one plain process: the benchmark's yardstick (not a rule script).

    python scripts/plain_task.py --outdir O [--config config.yaml more.yaml ...] [--threads N]

The plainest honest version of the task, through mminfer's own functions: one process, each
checkpoint loaded once, the task's steps in order (same.json and count.json, time.json,
kvbytes.json, temp.json, topp.json, report.md), nothing beyond the task. The inputs (course files
or the demo's), how the model is loaded and the task's values (prompt sizes, timing runs, seeds,
question, temperatures, p) come from the same config files as the workflow's, resolved the same
way, so both do the same work. scripts/benchmark.py times this against the workflow.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from mminfer import greedy, kvcache, sampling, timing  # noqa: E402
from mminfer.inputs import model_params, parsed_config, resolve_inputs  # noqa: E402
from mminfer.io import write_text_atomic  # noqa: E402
from mminfer.loading import ModelSpec, open_with_tokenizer, run_info  # noqa: E402
from mminfer.prompts import chat_prompt, check_length, prefix_prompt, task_prompt  # noqa: E402
from mminfer.records import ChatPrompt, PretrainPrompt, write_record  # noqa: E402
from mminfer.report import render_report  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--outdir", required=True, help="where the seven outputs go")
    parser.add_argument(
        "--config",
        nargs="+",
        default=[str(REPO / "config.yaml")],
        help="config files, later ones winning, as the workflow's --configfile "
        "(default: config.yaml)",
    )
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    args = parser.parse_args()
    config = parsed_config(*args.config)  # the schema's defaults under what the files set
    inputs = resolve_inputs(config)  # the course files or the demo's, as the workflow decides
    outdir = Path(args.outdir)
    cache, time_cfg, kv, temp, topp = (
        config[key] for key in ("cache", "time", "kvbytes", "temp", "topp")
    )
    model_spec = ModelSpec(**model_params(config, inputs["model_set"]))  # as the rules load it

    # the pretrained model, loaded once, with the rules' loading and checks
    pretrained, tokenizer = open_with_tokenizer(
        inputs["pretrain"], inputs["tokenizer"], model_spec, args.threads, "pretrain"
    )
    pretrained_run = run_info(pretrained)
    model, device = pretrained.model, pretrained.device
    max_positions = pretrained.config.max_position_embeddings

    # steps 1-2: same tokens with and without the cache; tokens fed
    prompt_ids = task_prompt(
        tokenizer,
        inputs["val_data"],
        cache["docs"],
        cache["prompt_tokens"],
        cache["new_tokens"],
        max_positions,
        "cache.prompt_tokens + cache.new_tokens",
    )
    prompt = PretrainPrompt(
        tokenizer=str(inputs["tokenizer"]),
        val_data=str(inputs["val_data"]),
        docs=cache["docs"],
        prompt_tokens=cache["prompt_tokens"],
    )
    same, count = greedy.compare_cache(
        model, prompt_ids, cache["new_tokens"], device, tokenizer, prompt, pretrained_run
    )
    write_record(outdir / "same.json", same)
    write_record(outdir / "count.json", count)

    # step 3: time
    timed = timing.time_cache(
        model,
        prompt_ids,
        cache["new_tokens"],
        time_cfg["warmup"],
        time_cfg["runs"],
        time_cfg["max_runs"],
        device,
        pretrained_run,
    )
    write_record(outdir / "time.json", timed)

    # step 4: the cache's bytes
    check_length(kv["tokens"], max_positions, "kvbytes.tokens")
    kv_bytes = kvcache.measure_kv_bytes(
        model, pretrained.config, kv["tokens"], kv["seed"], device, pretrained_run
    )
    write_record(outdir / "kvbytes.json", kv_bytes)

    # step 6 (the pretrained model is loaded now): top-p survivors after [bos] + prefix
    logits = sampling.next_token_logits(model, prefix_prompt(tokenizer, topp["prefix"]), device)
    survivors = sampling.survivors_by_p(logits, topp["ps"])
    write_record(outdir / "topp.json", survivors)

    # step 5: distinct answers of the SFT model per temperature (threads already set)
    sft, _ = open_with_tokenizer(
        inputs["sft"], inputs["tokenizer"], model_spec, None, "sft", inputs["sft_lora"]
    )
    question_ids, template = chat_prompt(tokenizer, temp["question"], temp["chatml_fallback"])
    chat = ChatPrompt(
        tokenizer=str(inputs["tokenizer"]),
        template=template,
        question=temp["question"],
        prompt_len=len(question_ids),
        seed=temp["seed"],
    )
    answers = sampling.temperature_experiment(
        sft.model,
        tokenizer,
        question_ids,
        temp["temperatures"],
        temp["samples"],
        temp["new_tokens"],
        temp["seed"],
        sft.device,
        chat,
        run_info(sft),
    )
    write_record(outdir / "temp.json", answers)

    # step 7: the report
    report = render_report(same, count, timed, kv_bytes, answers, survivors)
    write_text_atomic(outdir / "report.md", report)


if __name__ == "__main__":
    main()
