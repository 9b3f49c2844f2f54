"""The sampler is not the cache: one temperature's samples with and without it -> sampler.json.

The same seed with the cache and without, and a second seed with the cache.
"""

from mminfer.jobs.sampling import sampler_job
from mminfer.loading import ModelSource, ModelSpec
from mminfer.script import job_log, rule_only, tokenizer_folder

if "snakemake" in globals():
    with job_log(snakemake.log[0]):
        sampler_job(
            model=ModelSource(
                checkpoint=snakemake.input.sft,
                spec=ModelSpec(**snakemake.params.model),
                threads=snakemake.threads,
                input_key="sft",
                lora=snakemake.input.sft_lora or None,  # none: an empty input
            ),
            tokenizer=tokenizer_folder(snakemake.input.tokenizer),
            question=snakemake.params.question,
            samples=snakemake.params.samples,
            new_tokens=snakemake.params.new_tokens,
            seed=snakemake.params.seed,
            chatml_fallback=snakemake.params.chatml_fallback,
            temperature=snakemake.params.temperature,
            second_seed=snakemake.params.second_seed,
            out=snakemake.output[0],
        )
elif __name__ == "__main__":
    rule_only("sampler", "sampler.json")
