r"""Steps 1-2 of the task: greedy generation with and without the KV cache.

Writes same.json (same_ids, ids, prompt_len, new_tokens, ...) and count.json (prompt_len,
new_tokens, fed_with_cache, fed_without_cache, ...), both from one pair of generations
(mminfer.measures.cache.measure.compare_cache). Run by the workflow's `cache` rule, or by hand:

    python scripts/cache.py --pretrain /opt/mm/ref/pretrain.pth --tokenizer /opt/minimind/model \
        --val-data /opt/mm/data/pretrain_val.jsonl --outdir /root/mm/infer
"""

import logging
from pathlib import Path

from mminfer.measures.cache import measure as greedy
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
)


def cache(model: ModelSource, prompt: PretrainPrompt, new_tokens: int, same_out, count_out):
    """Open the model, generate with and without the cache, write same.json and count.json."""
    loaded, loaded_tokenizer, prompt_ids = open_for_task_prompt(
        model, prompt, new_tokens, TASK_LENGTH_KEYS
    )
    same, count = greedy.compare_cache(
        model=loaded.model,
        prompt_ids=prompt_ids,
        new_tokens=new_tokens,
        device=loaded.device,
        tokenizer=loaded_tokenizer,
        prompt=prompt,
        run=run_info(loaded),
    )
    logging.getLogger("mminfer").info(
        "same_ids=%s (max |logit difference| %.3g, first difference %s); fed %d with the cache "
        "(formula %d), %d without (formula %d)",
        same.same_ids,
        same.max_abs_logit_diff,
        same.first_difference,
        count.fed_with_cache,
        count.formula_with_cache,
        count.fed_without_cache,
        count.formula_without_cache,
    )
    write_record(same_out, same)
    write_record(count_out, count)


if "snakemake" in globals():
    with job_log(snakemake.log[0]):
        cache(
            model=rule_model(snakemake),
            prompt=rule_prompt(snakemake),
            new_tokens=snakemake.params.new_tokens,
            same_out=snakemake.output.same,
            count_out=snakemake.output.count_json,
        )
elif __name__ == "__main__":
    args = cli(
        __doc__,
        paths=[*PROMPT_FILES, ("--outdir", "where same.json and count.json go")],
        keys=PROMPT_KEYS,
    )
    with job_log(args.log):
        cache(
            model=hand_model(args, args.pretrain),
            prompt=hand_prompt(args),
            new_tokens=args.new_tokens,
            same_out=Path(args.outdir) / "same.json",
            count_out=Path(args.outdir) / "count.json",
        )
