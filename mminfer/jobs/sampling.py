"""Rules of rules/sampling.smk: steps 5-6 of the task, what temperature and top-p change."""

from __future__ import annotations

import logging

from mminfer import sampling
from mminfer.loading import ModelSource, open_for_chat, open_with_tokenizer, run_info
from mminfer.records import write_record

log = logging.getLogger("mminfer")


def temp_job(
    model: ModelSource,
    tokenizer,
    question: str,
    temperatures: list[float],
    samples: int,
    new_tokens: int,
    seed: int,
    chatml_fallback: bool,
    out,
):
    """Step 5 -> temp.json."""
    loaded, loaded_tokenizer, prompt_ids, prompt = open_for_chat(
        model, tokenizer, question, seed, chatml_fallback
    )
    temperatures_record = sampling.temperature_experiment(
        loaded.model,
        loaded_tokenizer,
        prompt_ids,
        temperatures,
        samples,
        new_tokens,
        seed,
        loaded.device,
        prompt,
        run_info(loaded),
    )
    for key, summary in temperatures_record.items():
        log.info(
            "temperature %s: %d distinct of %d; most common (%d): %r",
            key,
            summary.distinct,
            summary.samples,
            summary.answers[0].count,
            summary.answers[0].answer,
        )
    write_record(out, temperatures_record)
    return temperatures_record


def sampler_job(
    model: ModelSource,
    tokenizer,
    question: str,
    samples: int,
    new_tokens: int,
    seed: int,
    chatml_fallback: bool,
    temperature: float,
    second_seed: int,
    out,
):
    """The sampler is not the cache -> sampler.json.

    temp.json's samples at one temperature, with the cache and without (one seed), and with a second
    seed.
    """
    loaded, loaded_tokenizer, prompt_ids, prompt = open_for_chat(
        model, tokenizer, question, seed, chatml_fallback
    )
    check = sampling.sampler_check(
        loaded.model,
        loaded_tokenizer,
        prompt_ids,
        temperature,
        samples,
        new_tokens,
        seed,
        second_seed,
        loaded.device,
        prompt,
        run_info(loaded),
    )
    log.info(
        "temperature %s: %d of %d samples identical with and without the cache (first "
        "difference %s); %d differ with seed %d",
        temperature,
        check.identical_with_and_without_cache,
        samples,
        check.first_difference,
        check.differ_with_second_seed,
        second_seed,
    )
    write_record(out, check)
    return check


def topp_job(
    model: ModelSource,
    tokenizer,
    prefix: str,
    sharp_prefix: str,
    ps: list[float],
    topp_out,
    detail_out,
):
    """Step 6 -> topp.json and topp_detail.json.

    topp.json holds exactly the task's keys: the survivors after [bos] + prefix; topp_detail.json
    both positions, their entropy, top tokens and sorted distribution.
    """
    loaded, loaded_tokenizer = open_with_tokenizer(model, tokenizer)
    detail = sampling.topp_detail(
        loaded.model,
        loaded_tokenizer,
        {"open": prefix, "sharp": sharp_prefix},
        ps,
        loaded.device,
        run_info(loaded),
    )
    for position in detail.positions.values():
        log.info(
            "after [bos]%s: survivors %s, entropy %.2f bits",
            position.prefix,
            position.survivors,
            position.entropy_bits,
        )
    survivors = detail.positions["open"].survivors
    write_record(detail_out, detail)
    write_record(topp_out, survivors)
    return survivors
