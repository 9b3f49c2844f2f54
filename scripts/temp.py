r"""Step 5: distinct answers of the SFT model at each temperature -> temp.json; beyond the task,
the sampler is not the cache -> sampler.json.

One load of the SFT model: the cached draws of every temperature (mminfer.measures.temp.measure),
temp.json from them; then the sampler check at config key sampler.temperature reuses that
temperature's cached draws (the same seed, samples and new tokens) and draws only the uncached run
and the second seed. A sampler temperature that is not one of temp.temperatures has no draws to
reuse: its cached draws are drawn too. Run by the workflow's `temp` rule, or by hand (--sampler-out
also writes sampler.json):

    python scripts/temp.py --sft /opt/mm/ref/sft.pth --tokenizer /opt/minimind/model \
        --out temp.json
"""

import logging

from mminfer.measures.temp import measure
from mminfer.model.finite import model_named
from mminfer.model.loading import ModelSource, open_for_chat, prompted
from mminfer.records import write_record
from mminfer.workflow.script import (
    SFT,
    TOKENIZER,
    cli,
    hand_model,
    job_log,
    rule_model,
    section_keys,
    tokenizer_folder,
)

log = logging.getLogger("mminfer")


def temperature(
    sft: ModelSource,
    tokenizer,
    settings: measure.TempSettings,
    out,
    sampler_temperature: float | None = None,
    second_seed: int | None = None,
    sampler_out=None,
):
    """Open the SFT model, draw, write temp.json (and sampler.json when ``sampler_out``)."""
    loaded, loaded_tokenizer, prompt_ids, prompt = open_for_chat(
        sft, tokenizer, settings.question, settings.seed, settings.chatml_fallback
    )
    chat = prompted(loaded, loaded_tokenizer, prompt_ids, prompt)
    run = chat.run
    draws = measure.temperature_draws(
        model=loaded.model,
        tokenizer=loaded_tokenizer,
        prompt_ids=prompt_ids,
        temperatures=settings.temperatures,
        draws=settings.draws,
        device=loaded.device,
        named=model_named(run.checkpoint, run.dtype),
    )
    temps = measure.summarize_temperatures(loaded_tokenizer, draws, prompt, run)
    for key, summary in temps.items():
        log.info(
            "temperature %s: %d distinct of %d; most common (%d): %r",
            key,
            summary.distinct,
            summary.samples,
            summary.answers[0].count,
            summary.answers[0].answer,
        )
    write_record(out, temps)
    if sampler_out is None:
        return
    reused = draws.get(float(sampler_temperature))
    if reused is None:
        log.info("sampler.temperature %s is not in temp.temperatures: drawn", sampler_temperature)
    check = measure.sampler_check(
        chat=chat,
        temperature=sampler_temperature,
        draws=settings.draws,
        second_seed=second_seed,
        with_cache=reused,
    )
    log.info(
        "temperature %s: %d of %d samples identical with and without the cache (first "
        "difference %s); %d differ with seed %d",
        sampler_temperature,
        check.identical_with_and_without_cache,
        settings.samples,
        check.first_difference,
        check.differ_with_second_seed,
        second_seed,
    )
    write_record(sampler_out, check)


if "snakemake" in globals():
    with job_log(snakemake.log[0]):
        temperature(
            sft=rule_model(snakemake, "sft"),
            tokenizer=tokenizer_folder(snakemake.input.tokenizer),
            settings=measure.TempSettings(
                question=snakemake.params.question,
                temperatures=snakemake.params.temperatures,
                samples=snakemake.params.samples,
                new_tokens=snakemake.params.new_tokens,
                seed=snakemake.params.seed,
                chatml_fallback=snakemake.params.chatml_fallback,
            ),
            out=snakemake.output.temp,
            sampler_temperature=snakemake.params.sampler_temperature,
            second_seed=snakemake.params.second_seed,
            sampler_out=snakemake.output.sampler,
        )
elif __name__ == "__main__":
    args = cli(
        __doc__,
        paths=[SFT, TOKENIZER, ("--out", "temp.json to write")],
        keys=["sft_lora", *section_keys("temp", "sampler")],
        optional_paths=[("--sampler-out", "sampler.json to write too (the sampler check)")],
    )
    with job_log(args.log):
        temperature(
            sft=hand_model(args, args.sft, input_key="sft", lora=args.sft_lora),
            tokenizer=args.tokenizer,
            settings=measure.TempSettings(
                question=args.question,
                temperatures=args.temperatures,
                samples=args.samples,
                new_tokens=args.new_tokens,
                seed=args.seed,
                chatml_fallback=args.chatml_fallback,
            ),
            out=args.out,
            sampler_temperature=args.temperature,
            second_seed=args.second_seed,
            sampler_out=args.sampler_out,
        )
