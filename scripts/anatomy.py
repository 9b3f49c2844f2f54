r"""Where a step's time goes: step 1's generation taken apart, both ways -> anatomy.json.

Each call of forward counted exactly (tokens fed, context, logits rows, FLOPs as torch's counter
and the formula give them, bytes, kernels run), and this machine's speeds beside them (an op's
dispatch, the matmul FLOP/s, the bandwidth at each path's working set), with the threads the
time job uses (mminfer.measures.anatomy.measure.measure_anatomy). The report splits time.json's
medians with it.
Run by the workflow's `anatomy` rule, or by hand:

    python scripts/anatomy.py --pretrain /opt/mm/ref/pretrain.pth \
        --tokenizer /opt/minimind/model --val-data /opt/mm/data/pretrain_val.jsonl \
        --out anatomy.json
"""

import logging

from mminfer.measures.anatomy import measure as anatomy
from mminfer.model.loading import ModelSource, open_for_task_prompt, run_info
from mminfer.model.prompts import TASK_LENGTH_KEYS
from mminfer.records import PretrainPrompt, write_record
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


def measure(
    model: ModelSource,
    prompt: PretrainPrompt,
    new_tokens: int,
    probe_runs: int,
    split_tolerance: float,
    out,
):
    """Open the model at ``model.threads`` (time.threads, else the rule's cores), count both
    ways, probe the machine, write anatomy.json."""
    loaded, _, prompt_ids = open_for_task_prompt(model, prompt, new_tokens, TASK_LENGTH_KEYS)
    record = anatomy.measure_anatomy(
        model=loaded.model,
        prompt_ids=prompt_ids,
        new_tokens=new_tokens,
        probe_runs=probe_runs,
        split_tolerance=split_tolerance,
        device=loaded.device,
        run=run_info(loaded),
    )
    log = logging.getLogger("mminfer")
    for name in ("with_cache", "without_cache"):
        totals = record.path(name).totals
        log.info(
            "%s: %d calls, fed %d, logits rows %d, FLOPs %d counted / %d formula, bytes %d, "
            "kernels %d in forward + %d between",
            name,
            totals.calls,
            totals.fed,
            totals.logits_rows,
            totals.flops_counted,
            totals.flops_formula,
            totals.bytes_formula,
            totals.ops_in_forward,
            totals.ops_between,
        )
    machine = record.machine
    log.info(
        "machine: op %.3g s (CV %.1f%%), matmul %.3g FLOP/s (CV %.1f%%), %d threads",
        1 / machine.op.per_s,
        100 * machine.op.cv,
        machine.matmul.per_s,
        100 * machine.matmul.cv,
        record.threads,
    )
    for probe in machine.bandwidth:
        log.info(
            "bandwidth at %s (%d B): %.3g B/s (CV %.1f%%)",
            probe.at,
            probe.working_set_bytes,
            probe.speed.per_s,
            100 * probe.speed.cv,
        )
    write_record(out, record)


if "snakemake" in globals():
    with job_log(snakemake.log[0]):
        measure(
            model=rule_model(snakemake),
            prompt=rule_prompt(snakemake),
            new_tokens=snakemake.params.new_tokens,
            probe_runs=snakemake.params.probe_runs,
            split_tolerance=snakemake.params.split_tolerance,
            out=snakemake.output[0],
        )
elif __name__ == "__main__":
    args = cli(
        __doc__,
        paths=[*PROMPT_FILES, ("--out", "anatomy.json to write")],
        keys=[*PROMPT_KEYS, *section_keys("anatomy")],
    )
    with job_log(args.log):
        measure(
            model=hand_model(args, args.pretrain),
            prompt=hand_prompt(args),
            new_tokens=args.new_tokens,
            probe_runs=args.probe_runs,
            split_tolerance=args.split_tolerance,
            out=args.out,
        )
