r"""Step 3: the time of greedy generation with and without the KV cache -> time.json, and what
a user waits for in those same runs -> latency.json.

Medians of interleaved timed runs after warm-ups of both methods; speedup = without / with; more
rounds while the timing is doubtful (mminfer.measures.time.measure.time_with_latency: every run
carries a streamer stamping each token, whose stamps make latency.json). (Named time_generation.py
not to shadow the standard library's `time`.) Run by the workflow's `time` rule, or by hand:

    python scripts/time_generation.py --pretrain /opt/mm/ref/pretrain.pth \
        --tokenizer /opt/minimind/model --val-data /opt/mm/data/pretrain_val.jsonl --out time.json \
        --latency-out latency.json
"""

import logging

from mminfer.measures.time import measure as timing
from mminfer.measures.time.decide import fixed_cost
from mminfer.model.loading import ModelSource, check_prompt_logits, open_for_task_prompt, run_info
from mminfer.model.prompts import TASK_LENGTH_KEYS
from mminfer.records import PretrainPrompt, write_record
from mminfer.timing.ab import Rounds
from mminfer.workflow.script import (
    PROMPT_FILES,
    PROMPT_KEYS,
    cli,
    hand_model,
    hand_prompt,
    job_log,
    rule_model,
    rule_prompt,
    section_keys,
)


def time_generation(
    model: ModelSource,
    prompt: PretrainPrompt,
    new_tokens,
    rounds: Rounds,
    speed_tokens,
    cost_rounds,
    out,
    latency_out,
):
    """Open the model at ``model.threads`` (time.threads, else the rule's cores), time, write
    time.json and latency.json (where ``latency_out``)."""
    loaded, _, prompt_ids = open_for_task_prompt(model, prompt, new_tokens, TASK_LENGTH_KEYS)
    check_prompt_logits(loaded, prompt_ids)  # the timing keeps no logits to check
    timed, latency = timing.time_with_latency(
        model=loaded.model,
        prompt_ids=prompt_ids,
        new_tokens=new_tokens,
        rounds=rounds,
        speed_tokens=speed_tokens,
        cost_rounds=cost_rounds,
        device=loaded.device,
        run=run_info(loaded),
    )
    logging.getLogger("mminfer").info(
        "with_cache_s %.4f, without_cache_s %.4f, speedup %.2f (CV %.1f%% / %.1f%%, %d runs, "
        "verdict %s, %d threads, load %s)",
        timed.with_cache_s,
        timed.without_cache_s,
        timed.speedup,
        100 * timed.cv_with_cache,
        100 * timed.cv_without_cache,
        timed.runs_done,
        timed.verdict,
        timed.threads,
        timed.load_after,
    )
    logging.getLogger("mminfer").info(
        "narrow_s %.4f (a minimal-width generate, the same rounds), fixed share %.2f (%.2f-%.2f):"
        " fixed cost %s",
        timed.narrow_s,
        timed.fixed_share_interval.median,
        timed.fixed_share_interval.low,
        timed.fixed_share_interval.high,
        fixed_cost(timed),
    )
    logging.getLogger("mminfer").info(
        "ttft %.4f / %.4f s, tpot %.5f / %.5f s (with / without the cache), streamer %.2g s a run",
        latency.with_cache.ttft_s,
        latency.without_cache.ttft_s,
        latency.with_cache.tpot_s,
        latency.without_cache.tpot_s,
        latency.cost.per_run_s,
    )
    write_record(out, timed)
    if latency_out is not None:
        write_record(latency_out, latency)


if "snakemake" in globals():
    with job_log(snakemake.log[0]):
        time_generation(
            model=rule_model(snakemake),
            prompt=rule_prompt(snakemake),
            new_tokens=snakemake.params.new_tokens,
            rounds=Rounds(
                warmup=snakemake.params.warmup,
                runs=snakemake.params.runs,
                max_runs=snakemake.params.max_runs,
            ),
            speed_tokens=snakemake.params.speed_tokens,
            cost_rounds=snakemake.params.cost_rounds,
            out=snakemake.output.time,
            latency_out=snakemake.output.latency,
        )
elif __name__ == "__main__":
    args = cli(
        __doc__,
        paths=[*PROMPT_FILES, ("--out", "time.json to write")],
        optional_paths=[("--latency-out", "latency.json to write too (the same runs' stamps)")],
        keys=[*PROMPT_KEYS, *section_keys("time", "latency", without=("time.threads",))],
    )
    with job_log(args.log):
        time_generation(
            model=hand_model(args, args.pretrain),
            prompt=hand_prompt(args),
            new_tokens=args.new_tokens,
            rounds=Rounds(warmup=args.warmup, runs=args.runs, max_runs=args.max_runs),
            speed_tokens=args.speed_tokens,
            cost_rounds=args.cost_rounds,
            out=args.out,
            latency_out=args.latency_out,
        )
