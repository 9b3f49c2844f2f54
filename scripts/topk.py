"""The task's trap, measured: steps 5 and 6 with generate's default top_k left on -> topk.json.

Opens the SFT model (with its LoRA) for step 5's experiment and the pretrained model for step 6's
survivors (mminfer.topk.measure_topk). Run by the workflow's `topk` rule only.
"""

import logging

from mminfer.loading import ModelSource, ModelSpec, open_for_chat, open_model, run_info
from mminfer.records import write_record
from mminfer.script import job_log, rule_only, tokenizer_folder
from mminfer.topk import measure_topk


def topk(
    sft: ModelSource,
    pretrain: ModelSource,
    tokenizer,
    top_k: int,
    question: str,
    temperatures: list[float],
    samples: int,
    new_tokens: int,
    seed: int,
    chatml_fallback: bool,
    prefix: str,
    ps: list[float],
    out,
):
    """Open both models, measure with top_k on, write topk.json."""
    loaded, loaded_tokenizer, prompt_ids, prompt = open_for_chat(
        sft, tokenizer, question, seed, chatml_fallback
    )
    pretrained = open_model(pretrain)
    record = measure_topk(
        sft_model=loaded.model,
        tokenizer=loaded_tokenizer,
        prompt_ids=prompt_ids,
        temperatures=temperatures,
        samples=samples,
        new_tokens=new_tokens,
        seed=seed,
        top_k=top_k,
        prompt=prompt,
        run=run_info(loaded),
        pretrain_model=pretrained.model,
        prefix=prefix,
        ps=ps,
        topp_run=run_info(pretrained),
        device=loaded.device,
    )
    for key, summary in record.temp.items():
        logging.getLogger("mminfer").info(
            "top_k %d, temperature %s: %d distinct of %d; top-k cut %.4f at the first token, "
            "%.4f on average over %d steps",
            top_k,
            key,
            summary.distinct,
            summary.samples,
            summary.cut_first,
            summary.cut_mean,
            summary.steps,
        )
    logging.getLogger("mminfer").info(
        "after [bos]%s: top-k keeps %d, then top-p %s", prefix, record.top_k_survivors, record.topp
    )
    write_record(out, record)


if "snakemake" in globals():
    with job_log(snakemake.log[0]):
        topk(
            sft=ModelSource(
                checkpoint=snakemake.input.sft,
                spec=ModelSpec(**snakemake.params.model),
                threads=snakemake.threads,
                input_key="sft",
                lora=snakemake.input.sft_lora or None,  # none: an empty input
            ),
            pretrain=ModelSource(
                checkpoint=snakemake.input.pretrain,
                spec=ModelSpec(**snakemake.params.model),
                threads=snakemake.threads,
            ),
            tokenizer=tokenizer_folder(snakemake.input.tokenizer),
            top_k=snakemake.params.top_k,
            question=snakemake.params.question,
            temperatures=snakemake.params.temperatures,
            samples=snakemake.params.samples,
            new_tokens=snakemake.params.new_tokens,
            seed=snakemake.params.seed,
            chatml_fallback=snakemake.params.chatml_fallback,
            prefix=snakemake.params.prefix,
            ps=snakemake.params.ps,
            out=snakemake.output[0],
        )
elif __name__ == "__main__":
    rule_only("topk", "topk.json")
