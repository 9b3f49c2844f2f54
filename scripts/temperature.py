r"""Step 5: distinct answers of the SFT model at each temperature -> temp.json; beyond the task,
the sampler is not the cache -> sampler.json.

One load of the SFT model: the cached draws of every temperature (mminfer.measures.temp.measure),
temp.json from them; then the sampler check at config key sampler.temperature reuses that
temperature's cached draws (the same seed, samples and new tokens) and draws only the uncached run
and the second seed. A sampler temperature that is not one of temp.temperatures has no draws to
reuse: its cached draws are drawn too. Run by the workflow's `temp` rule, or by hand (--sampler-out
also writes sampler.json):

    python scripts/temperature.py --sft /opt/mm/ref/sft.pth --tokenizer /opt/minimind/model \
        --out temp.json
"""

import logging

from mminfer.measures.temp import measure
from mminfer.model.finite import model_named
from mminfer.model.loading import ModelSource, open_for_chat, prompted
from mminfer.records import write_record
from mminfer.workflow.script import SFT, TOKENIZER, run_by_hand, run_rule, section_keys

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
    run_rule(snakemake, temperature)
elif __name__ == "__main__":
    run_by_hand(
        temperature,
        __doc__,
        paths=[SFT, TOKENIZER, ("--out", "temp.json to write")],
        keys=["sft_lora", *section_keys("temp", "sampler")],
        optional_paths=[("--sampler-out", "sampler.json to write too (the sampler check)")],
        sampler_temperature=lambda args: args.temperature,
    )
