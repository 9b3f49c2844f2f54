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

from mminfer.errors import MminferError  # noqa: E402
from mminfer.io import write_text_atomic  # noqa: E402
from mminfer.measurements import REPORT, task_files  # noqa: E402
from mminfer.measures.cache import measure as greedy  # noqa: E402
from mminfer.measures.kvbytes import measure as kvcache  # noqa: E402
from mminfer.measures.temp import measure as temperature  # noqa: E402
from mminfer.measures.time import measure as timing  # noqa: E402
from mminfer.measures.topp import measure as topp_measure  # noqa: E402
from mminfer.model import draws  # noqa: E402
from mminfer.model.loading import (  # noqa: E402
    ModelSource,
    ModelSpec,
    open_for_chat,
    open_for_task_prompt,
    prompted,
    run_info,
)
from mminfer.model.prompts import TASK_LENGTH_KEYS, check_length, prefix_prompt  # noqa: E402
from mminfer.records import PretrainPrompt, write_record  # noqa: E402
from mminfer.report.render import render_report  # noqa: E402
from mminfer.timing.ab import Rounds  # noqa: E402
from mminfer.workflow.inputs import model_params, parsed_config, resolve_inputs  # noqa: E402


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
    files = task_files()  # the task's JSON files, by measurement name
    cache, time_cfg, kv, temp, topp = (
        config[key] for key in ("cache", "time", "kvbytes", "temp", "topp")
    )
    model_spec = ModelSpec(**model_params(config, inputs["model_set"]))  # as the rules load it

    # the pretrained model, loaded once, with the rules' loading and checks
    prompt = PretrainPrompt(
        tokenizer=str(inputs["tokenizer"]),
        val_data=str(inputs["val_data"]),
        docs=cache["docs"],
        prompt_tokens=cache["prompt_tokens"],
    )
    pretrained, tokenizer, prompt_ids = open_for_task_prompt(
        ModelSource(checkpoint=inputs["pretrain"], spec=model_spec, threads=args.threads),
        prompt,
        cache["new_tokens"],
        TASK_LENGTH_KEYS,
    )
    pretrained_run = run_info(pretrained)
    model, device = pretrained.model, pretrained.device

    # steps 1-2: same tokens with and without the cache; tokens fed
    same, count = greedy.compare_cache(
        model=model,
        prompt_ids=prompt_ids,
        new_tokens=cache["new_tokens"],
        device=device,
        tokenizer=tokenizer,
        prompt=prompt,
        run=pretrained_run,
    )
    write_record(outdir / files["same"], same)
    write_record(outdir / files["count"], count)

    # step 3: time
    timed = timing.time_cache(
        model=model,
        prompt_ids=prompt_ids,
        new_tokens=cache["new_tokens"],
        rounds=Rounds(time_cfg["warmup"], time_cfg["runs"], time_cfg["max_runs"]),
        device=device,
        run=pretrained_run,
    )
    write_record(outdir / files["time"], timed)

    # step 4: the cache's bytes
    check_length(kv["tokens"], pretrained.config.max_position_embeddings, "kvbytes.tokens")
    kv_bytes = kvcache.measure_kv_bytes(
        model=model,
        config=pretrained.config,
        tokens=kv["tokens"],
        seed=kv["seed"],
        device=device,
        run=pretrained_run,
    )
    write_record(outdir / files["kvbytes"], kv_bytes)

    # step 6 (the pretrained model is loaded now): top-p survivors after [bos] + prefix
    logits = draws.next_token_logits(model, prefix_prompt(tokenizer, topp["prefix"]), device)
    survivors = topp_measure.survivors_by_p(logits, topp["ps"])
    write_record(outdir / files["topp"], survivors)

    # step 5: distinct answers of the SFT model per temperature (threads already set)
    sft_model = ModelSource(
        checkpoint=inputs["sft"],
        spec=model_spec,
        threads=None,  # already set
        input_key="sft",
        lora=inputs["sft_lora"],
    )
    sft, _, question_ids, chat = open_for_chat(
        sft_model, inputs["tokenizer"], temp["question"], temp["seed"], temp["chatml_fallback"]
    )
    answers = temperature.temperature_experiment(
        chat=prompted(sft, tokenizer, question_ids, chat),
        temperatures=temp["temperatures"],
        draws=draws.Draws(
            samples=temp["samples"], new_tokens=temp["new_tokens"], seed=temp["seed"]
        ),
    )
    write_record(outdir / files["temp"], answers)

    # step 7: the report
    records = {
        "same": same,
        "count": count,
        "time": timed,
        "kvbytes": kv_bytes,
        "temp": answers,
        "topp": survivors,
    }
    report = render_report(records, results=str(outdir))
    write_text_atomic(outdir / REPORT, report)


if __name__ == "__main__":
    try:
        main()
    except MminferError as error:  # bad input: one paragraph and exit status 1, as a job's log
        sys.exit(f"plain_task.py: error: {error}")
