"""Steps 1 and 2: greedy generation with and without the KV cache; same tokens? tokens fed?

A recorder around ``forward`` counts the tokens fed and keeps each step's last logits, so that
where the two paths pick different tokens the first differing step is diagnosed: they run
different attention kernels (fused SDPA over the whole sequence, an explicit softmax over one new
token), and a near-tie of the top two logits is where rounding can flip the argmax.
"""

from __future__ import annotations

from mminfer.errors import input_source
from mminfer.measures.cache.count import Count
from mminfer.measures.cache.same import Same
from mminfer.model.counting import (
    ForwardRecorder,
    fed_with_cache_formula,
    fed_without_cache_formula,
)
from mminfer.model.finite import check_logits, model_named
from mminfer.model.generation import first_difference, greedy_generate
from mminfer.model.tokenizer import Tokenizer, check_greedy_answer_fits
from mminfer.records import PretrainPrompt, RunInfo


def compare_cache(
    *,
    model,
    prompt_ids: list[int],
    new_tokens: int,
    device,
    tokenizer: Tokenizer,
    prompt: PretrainPrompt,
    run: RunInfo,
) -> tuple[Same, Count]:
    """same.json and count.json: generate greedily with and without the cache."""
    with_cache = ForwardRecorder(keep_logits=True)
    without_cache = ForwardRecorder(keep_logits=True)
    greedy = {
        "model": model,
        "prompt_ids": prompt_ids,
        "new_tokens": new_tokens,
        "device": device,
    }
    ids = greedy_generate(**greedy, use_cache=True, recorder=with_cache)
    ids_without_cache = greedy_generate(**greedy, use_cache=False, recorder=without_cache)
    for path, recorder in (("with", with_cache), ("without", without_cache)):
        for step, logits in enumerate(recorder.last_logits):
            where = (
                f"{model_named(run.checkpoint, run.dtype)}, greedy generation {path} the cache, "
                f"step {step + 1} of {new_tokens}"
            )
            check_logits(logits, where)  # argmax of NaN is token 0: never a same_ids from it
    tokenizer_source = input_source(run.model_set, "tokenizer", tokenizer.folder)
    for answer in (ids, ids_without_cache):  # a tokenizer of another model stops here
        check_greedy_answer_fits(answer, tokenizer, run.config["vocab_size"], tokenizer_source)

    difference = first_difference(
        ids_with=ids,
        ids_without=ids_without_cache,
        logits_with=with_cache.last_logits,
        logits_without=without_cache.last_logits,
    )
    # after the first different token the two paths see different contexts: compare up to it only
    if difference is None:
        compared_steps = len(with_cache.last_logits)
    else:
        compared_steps = difference.step + 1
    step_diffs = []
    for step in range(compared_steps):
        gap = with_cache.last_logits[step] - without_cache.last_logits[step]
        step_diffs.append(float(gap.abs().max()))

    prompt_len = len(prompt_ids)
    same = Same(
        same_ids=ids == ids_without_cache,
        ids=ids,
        prompt_len=prompt_len,
        new_tokens=new_tokens,
        ids_without_cache=ids_without_cache,
        max_abs_logit_diff=max(step_diffs, default=0.0),
        first_difference=difference,
        text=tokenizer.decode(ids),
        ids_past_tokenizer=tokenizer.past_end(ids),
        prompt=prompt,
        run=run,
    )
    count = Count(
        prompt_len=prompt_len,
        new_tokens=new_tokens,
        fed_with_cache=sum(with_cache.fed_per_call),
        fed_without_cache=sum(without_cache.fed_per_call),
        formula_with_cache=fed_with_cache_formula(prompt_len, new_tokens),
        formula_without_cache=fed_without_cache_formula(prompt_len, new_tokens),
        calls_with_cache=len(with_cache.fed_per_call),
        calls_without_cache=len(without_cache.fed_per_call),
        prompt=prompt,
        run=run,
    )
    return same, count
