"""What the repetition penalty changes and costs -> repetition.json.

Opens the SFT model (with its LoRA) for the sampled answers and the cost, the pretrained model and
step 1's prompt for greedy (mminfer.measures.repetition.measure.measure_repetition). Run by the
workflow's `repetition` rule only.
"""

import logging

from mminfer.measures.repetition.measure import RepetitionSettings, measure_repetition
from mminfer.model.draws import Draws
from mminfer.model.loading import ModelSource, open_for_chat, open_for_task_prompt, prompted
from mminfer.records import PretrainPrompt, write_record
from mminfer.timing.ab import Rounds
from mminfer.workflow.script import job_log, rule_model, rule_only, rule_prompt, tokenizer_folder

GREEDY_LENGTH_KEYS = "cache.prompt_tokens + cache.new_tokens"


def repetition(
    sft: ModelSource,
    pretrain: ModelSource,
    tokenizer,
    greedy_prompt: PretrainPrompt,
    settings: RepetitionSettings,
    draws: Draws,
    rounds: Rounds,
    out,
):
    """Open both models, sample and time per penalty, write repetition.json."""
    loaded, loaded_tokenizer, prompt_ids, prompt = open_for_chat(
        sft, tokenizer, settings.question, draws.seed, settings.chatml_fallback
    )
    pretrained, pretrained_tokenizer, greedy_ids = open_for_task_prompt(
        pretrain, greedy_prompt, settings.greedy_new_tokens, GREEDY_LENGTH_KEYS
    )
    record = measure_repetition(
        sft=prompted(loaded, loaded_tokenizer, prompt_ids, prompt),
        greedy=prompted(pretrained, pretrained_tokenizer, greedy_ids, greedy_prompt),
        settings=settings,
        draws=draws,
        rounds=rounds,
    )
    log = logging.getLogger("mminfer")
    for key, penalty in record.penalties.items():
        log.info(
            "repetition_penalty %s at T %s: %d distinct of %d, %d looping; greedy leaves plain "
            "greedy at step %s",
            key,
            settings.temperature,
            penalty.distinct,
            penalty.samples,
            penalty.looping,
            penalty.greedy_first_divergence,
        )
    if record.timing is not None:
        timing = record.timing
        log.info(
            "penalty %s: %.4f s with, %.4f s without (share %.1f%%, CV %.1f%% / %.1f%%, %d runs, "
            "verdict %s)",
            timing.penalty,
            timing.with_penalty_s,
            timing.without_penalty_s,
            100 * timing.penalty_share,
            100 * timing.cv_with_penalty,
            100 * timing.cv_without_penalty,
            timing.runs_done,
            timing.verdict,
        )
    write_record(out, record)


if "snakemake" in globals():
    with job_log(snakemake.log[0]):
        repetition(
            sft=rule_model(snakemake, "sft"),
            pretrain=rule_model(snakemake, "pretrain"),
            tokenizer=tokenizer_folder(snakemake.input.tokenizer),
            greedy_prompt=rule_prompt(snakemake),
            settings=RepetitionSettings(
                question=snakemake.params.question,
                chatml_fallback=snakemake.params.chatml_fallback,
                temperature=snakemake.params.temperature,
                penalties=snakemake.params.penalties,
                greedy_new_tokens=snakemake.params.greedy_new_tokens,
            ),
            draws=Draws(
                samples=snakemake.params.samples,
                new_tokens=snakemake.params.new_tokens,
                seed=snakemake.params.seed,
            ),
            rounds=Rounds(
                warmup=snakemake.params.warmup,
                runs=snakemake.params.runs,
                max_runs=snakemake.params.max_runs,
            ),
            out=snakemake.output[0],
        )
elif __name__ == "__main__":
    rule_only("repetition", "repetition.json")
