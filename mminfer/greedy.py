"""Steps 1 and 2: greedy generation with and without the KV cache; same tokens? tokens fed?

A recorder around ``forward`` counts the tokens fed and keeps each step's last logits, so that
where the two paths pick different tokens the first differing step is diagnosed: they run
different attention kernels (fused SDPA over the whole sequence, an explicit softmax over one new
token), and a near-tie of the top two logits is where rounding can flip the argmax.
"""

from __future__ import annotations

import torch

from mminfer.counting import ForwardRecorder, fed_with_cache_formula, fed_without_cache_formula
from mminfer.finite import check_logits, model_named
from mminfer.inputs import input_source
from mminfer.records import FirstDifference, PretrainPrompt, RunInfo
from mminfer.records.fed import Count
from mminfer.records.same import Same
from mminfer.tokenizer import Tokenizer, check_greedy_answer_fits

# The task's greedy arguments of MiniMind's generate (top_k=0: its default of 50 is turned off).
GREEDY = {"do_sample": False, "top_k": 0, "top_p": 1.0, "eos_token_id": None}


def greedy_generate(
    model,
    prompt_ids: list[int],
    new_tokens: int,
    use_cache: bool,
    device,
    recorder: ForwardRecorder | None = None,
) -> list[int]:
    """The new token ids of one greedy generation, as the task specifies it."""
    input_ids = torch.tensor([prompt_ids], dtype=torch.long, device=device)
    recorder = recorder or ForwardRecorder()
    with recorder.watching(model):
        output = model.generate(input_ids, max_new_tokens=new_tokens, use_cache=use_cache, **GREEDY)
    return output[0, len(prompt_ids) :].tolist()


def top2_margin(logits: torch.Tensor) -> float:
    """top-1 logit minus top-2 logit of a (vocab,) vector: how close the argmax was to flipping."""
    return float(torch.topk(logits, 2).values.diff().neg())


def first_difference(
    ids_with: list[int],
    ids_without: list[int],
    logits_with: list[torch.Tensor],
    logits_without: list[torch.Tensor],
) -> FirstDifference | None:
    """Where the two greedy paths first pick different tokens, and how close that call was."""
    for step, (a, b) in enumerate(zip(ids_with, ids_without)):
        if a == b:
            continue
        with_cache = logits_with[step][0]
        without_cache = logits_without[step][0]
        return FirstDifference(
            step=step,
            token_with_cache=a,
            token_without_cache=b,
            margin_with_cache=top2_margin(with_cache),
            margin_without_cache=top2_margin(without_cache),
            max_abs_logit_diff=float((with_cache - without_cache).abs().max()),
            max_abs_logit=float(with_cache.abs().max()),
        )
    return None


def compare_cache(
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
    ids = greedy_generate(model, prompt_ids, new_tokens, True, device, with_cache)
    ids_without_cache = greedy_generate(model, prompt_ids, new_tokens, False, device, without_cache)
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
        ids, ids_without_cache, with_cache.last_logits, without_cache.last_logits
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
