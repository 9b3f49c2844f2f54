"""The task's trap, measured: steps 5 and 6 with generate's default top_k left on -> topk.json.

Opens the SFT model (with its LoRA) for step 5's experiment and the pretrained model for step 6's
survivors (mminfer.measures.topk.measure.measure_topk). Run by the workflow's `topk` rule only.
"""

import logging

from mminfer.measures.topk.measure import TopKSettings, measure_topk
from mminfer.model.draws import Draws
from mminfer.model.loading import ModelSource, open_for_chat, open_model, prompted, run_info
from mminfer.records import write_record
from mminfer.workflow.script import job_log, rule_model, rule_only, tokenizer_folder


def topk(
    sft: ModelSource, pretrain: ModelSource, tokenizer, draws: Draws, settings: TopKSettings, out
):
    """Open both models, measure with top_k on, write topk.json."""
    loaded, loaded_tokenizer, prompt_ids, prompt = open_for_chat(
        sft, tokenizer, settings.question, draws.seed, settings.chatml_fallback
    )
    pretrained = open_model(pretrain)
    record = measure_topk(
        sft=prompted(loaded, loaded_tokenizer, prompt_ids, prompt),
        pretrain_model=pretrained.model,
        topp_run=run_info(pretrained),
        draws=draws,
        settings=settings,
    )
    for key, summary in record.temp.items():
        logging.getLogger("mminfer").info(
            "top_k %d, temperature %s: %d distinct of %d; top-k cut %.4f at the first token, "
            "%.4f on average over %d steps",
            settings.top_k,
            key,
            summary.distinct,
            summary.samples,
            summary.cut_first,
            summary.cut_mean,
            summary.steps,
        )
    logging.getLogger("mminfer").info(
        "after [bos]%s: top-k keeps %d, then top-p %s",
        settings.prefix,
        record.top_k_survivors,
        record.topp,
    )
    write_record(out, record)


if "snakemake" in globals():
    with job_log(snakemake.log[0]):
        topk(
            sft=rule_model(snakemake, "sft"),
            pretrain=rule_model(snakemake, "pretrain"),
            tokenizer=tokenizer_folder(snakemake.input.tokenizer),
            draws=Draws(
                samples=snakemake.params.samples,
                new_tokens=snakemake.params.new_tokens,
                seed=snakemake.params.seed,
            ),
            settings=TopKSettings(
                question=snakemake.params.question,
                chatml_fallback=snakemake.params.chatml_fallback,
                temperatures=snakemake.params.temperatures,
                top_k=snakemake.params.top_k,
                prefix=snakemake.params.prefix,
                ps=snakemake.params.ps,
            ),
            out=snakemake.output[0],
        )
elif __name__ == "__main__":
    rule_only("topk", "topk.json")
