"""The sampler is not the cache (mminfer.measures.temp.measure.sampler_check): one seed's samples
are the same
with the cache and without, a second seed's are not, and a model whose cached path differs is
caught, with the first differing sample and token."""

from __future__ import annotations

from conftest import CHAT_PROMPT, CachedStepsNudged

from mminfer.measures.temp.measure import sampler_check, temperature_draws
from mminfer.model.draws import Draws, Prompted
from mminfer.model.prompts import chat_prompt


def check(model, tokenizer, run, samples=30, new_tokens=12):
    prompt_ids, _ = chat_prompt(tokenizer, "가람 마을의 특산물은 무엇인가요?")
    return sampler_check(
        chat=Prompted(model, tokenizer, prompt_ids, CHAT_PROMPT, "cpu", run),
        temperature=1.0,
        draws=Draws(samples=samples, new_tokens=new_tokens, seed=0),
        second_seed=1,
    )


def test_the_minimind_backend_samples_identically_too(
    load_tiny, minimind_src, tiny_tokenizer, tiny_run
):
    model = load_tiny(backend="minimind", minimind_src=minimind_src).model
    assert check(model, tiny_tokenizer, tiny_run).identical_with_and_without_cache == 30


def test_a_cached_path_that_differs_is_caught_with_its_first_token(
    tiny_model, tiny_tokenizer, tiny_run
):
    result = check(CachedStepsNudged(tiny_model, nudge=8.0), tiny_tokenizer, tiny_run)
    assert result.identical_with_and_without_cache < 30
    difference = result.first_difference
    assert difference.step >= 1  # step 0 feeds the whole prompt on both paths
    assert difference.token_with_cache == 7


def test_thirty_samples_are_identical_and_reusing_the_temperature_draws_changes_nothing(
    tiny_model, tiny_tokenizer, tiny_run
):
    """The temp rule hands the check temp.json's cached draws at its temperature: the same
    record as drawing them again (the same seed, samples and new tokens)."""
    prompt_ids, _ = chat_prompt(tiny_tokenizer, "가람 마을의 특산물은 무엇인가요?")
    draws = temperature_draws(
        model=tiny_model,
        tokenizer=tiny_tokenizer,
        prompt_ids=prompt_ids,
        temperatures=[1.5, 1.0],
        draws=Draws(samples=30, new_tokens=12, seed=0),
        device="cpu",
    )
    reused = sampler_check(
        chat=Prompted(tiny_model, tiny_tokenizer, prompt_ids, CHAT_PROMPT, "cpu", tiny_run),
        temperature=1.0,
        draws=Draws(samples=30, new_tokens=12, seed=0),
        second_seed=1,
        with_cache=draws[1.0],
    )
    assert reused == check(tiny_model, tiny_tokenizer, tiny_run)
    assert reused.identical_with_and_without_cache == 30 and reused.first_difference is None
    assert reused.differ_with_second_seed > 0  # the seed decides which answers come out
