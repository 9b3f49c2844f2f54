"""A left-padded batch with its attention_mask against each prompt alone -> batch.json.

Opens the pretrained model, builds the prompts (step 1's and shorter ones from the validation
documents after it) and measures (mminfer.measures.batch.measure.measure_batch). Run by the
workflow's `batch` rule only.
"""

import logging

from mminfer.measures.batch.measure import LENGTH_KEYS, batch_prompts, measure_batch
from mminfer.model.loading import ModelSource, open_for_task_prompt, run_info
from mminfer.records import PretrainPrompt, write_record
from mminfer.timing.ab import Rounds
from mminfer.workflow.script import job_log, rule_model, rule_only, rule_prompt


def batch(
    model: ModelSource,
    prompt: PretrainPrompt,
    prompts: int,
    shortest: int,
    new_tokens: int,
    rounds: Rounds,
    out,
):
    """Open the model, generate the batch three ways and each prompt alone, time, write."""
    loaded, tokenizer, _ = open_for_task_prompt(model, prompt, new_tokens, LENGTH_KEYS)
    rows = batch_prompts(
        tokenizer, prompt.val_data, prompt.docs, prompt.prompt_tokens, prompts, shortest
    )
    record = measure_batch(
        model=loaded.model,
        tokenizer=tokenizer,
        prompts=rows,
        new_tokens=new_tokens,
        rounds=rounds,
        device=loaded.device,
        prompt=prompt,
        run=run_info(loaded),
    )
    log = logging.getLogger("mminfer")
    for name, rows_of in (
        ("mask", record.rows),
        ("no mask", record.no_mask.rows),
        ("right padding", record.right_padding.rows),
    ):
        log.info(
            "%s: same ids per row %s, first divergence %s",
            name,
            [row.same_ids for row in rows_of],
            [row.first_divergence for row in rows_of],
        )
    timing = record.timing
    log.info(
        "batch %.4f s (%.1f tokens/s) against one after another %.4f s (%.1f tokens/s), verdict %s",
        timing.batch_s,
        timing.batch_tokens_per_s,
        timing.sequential_s,
        timing.sequential_tokens_per_s,
        timing.verdict,
    )
    if record.half_precision is not None:
        log.info("half precision: %s", record.half_precision)
    write_record(out, record)


if "snakemake" in globals():
    with job_log(snakemake.log[0]):
        batch(
            model=rule_model(snakemake),
            prompt=rule_prompt(snakemake),
            prompts=snakemake.params.prompts,
            shortest=snakemake.params.shortest,
            new_tokens=snakemake.params.new_tokens,
            rounds=Rounds(
                warmup=snakemake.params.warmup,
                runs=snakemake.params.runs,
                max_runs=snakemake.params.max_runs,
            ),
            out=snakemake.output[0],
        )
elif __name__ == "__main__":
    rule_only("batch", "batch.json")
