"""What removes the fixed cost per decode step -> remedies.json (measure_remedies), rule only."""

import logging

from mminfer.measures.remedies import measure
from mminfer.model.loading import ModelSource, open_for_task_prompt, run_info
from mminfer.model.prompts import TASK_LENGTH_KEYS
from mminfer.records import PretrainPrompt, write_record
from mminfer.timing.ab import Rounds
from mminfer.workflow.script import job_log, rule_model, rule_only, rule_prompt


def remedies(
    model: ModelSource, prompt: PretrainPrompt, new_tokens: int, rounds: Rounds, compile, out
):
    """Open the model at time.threads, check and time every remedy, write remedies.json."""
    loaded, _, prompt_ids = open_for_task_prompt(model, prompt, new_tokens, TASK_LENGTH_KEYS)
    record = measure.measure_remedies(
        model=loaded.model,
        prompt_ids=prompt_ids,
        new_tokens=new_tokens,
        rounds=rounds,
        settings=measure.RemedySettings(compile=compile),
        device=loaded.device,
        run=run_info(loaded),
    )
    for name, r in record.remedies.items():
        logging.getLogger("mminfer").info("%s: %s %s", name, r.same_ids, r.reason or r.saves)
    write_record(out, record)


if "snakemake" in globals():
    with job_log(snakemake.log[0]):
        remedies(
            model=rule_model(snakemake),
            prompt=rule_prompt(snakemake),
            new_tokens=snakemake.params.new_tokens,
            rounds=Rounds(
                warmup=snakemake.params.warmup,
                runs=snakemake.params.runs,
                max_runs=snakemake.params.max_runs,
            ),
            compile=snakemake.params.compile,
            out=snakemake.output[0],
        )
elif __name__ == "__main__":
    rule_only("remedies", "remedies.json")
