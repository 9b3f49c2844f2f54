"""The task's trap, measured: generate's default top_k=50 left on in steps 5 and 6 -> topk.json.

The task turns top-k off (top_k=0) "to keep the conditions clean"; MiniMind's eval_llm.py leaves it
on. Here step 5's experiment runs as temp.json's (the same prompt, temperatures, seed, samples and
new tokens) with top_k on, and each step's logits are kept to say how much probability top-k cut:
at the first answer token (the same for every sample: one prompt) and on average over the steps
that drew an answer. Step 6's survivors after [bos] + prefix are counted when top-k runs first, as
generate runs it (every logit below the k-th largest set to -inf, then top-p). Greedy is left
alone: the argmax is always among the k largest, so top-k never changes it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import torch

from mminfer.errors import MminferError
from mminfer.measures.topk.topk import TopK, TopKTemperature
from mminfer.model.counting import ForwardRecorder
from mminfer.model.draws import (
    Draws,
    Prompted,
    Sampler,
    answer_ids_past_tokenizer,
    counted_answers,
    cut_at_eos,
    decoded_answers,
    next_token_logits,
    sampled_rows,
    temperature_key,
)
from mminfer.model.finite import check_logits, finite_logits, model_named
from mminfer.model.prompts import prefix_prompt
from mminfer.model.twin import keep_top_k, keep_top_p
from mminfer.records import RunInfo

TOP_K_KEY = "config key 'topk.top_k'"


@dataclass(frozen=True)
class TopKSettings:
    """What the topk rule measures besides temp's draws (its params of the same names)."""

    question: str  # temp.question, asked of the SFT model
    chatml_fallback: bool  # temp.chatml_fallback
    temperatures: list[float]  # temp.temperatures, step 5's
    top_k: int  # topk.top_k, generate's default
    prefix: str  # topp.prefix, step 6's
    ps: list[float]  # topp.ps


def check_top_k(top_k: int, vocab_size: int) -> None:
    """top_k must be a count of candidates the vocabulary has."""
    if not 1 <= top_k <= vocab_size:
        raise MminferError(
            f"{TOP_K_KEY} is {top_k}; it must be between 1 and the model's vocabulary "
            f"({vocab_size})."
        )


def cut_by_top_k(scaled_logits: torch.Tensor, top_k: int) -> torch.Tensor:
    """The probability top-k removes from each row of (n, vocab) logits already divided by T.

    The probability is softmax(logits / T) before the cut; the kept tokens are those at or above
    the k-th largest logit (ties kept), as generate keeps them.
    """
    if top_k <= 0:  # generate skips top-k: nothing is cut
        return torch.zeros(scaled_logits.shape[:-1], dtype=torch.float64)
    scaled = scaled_logits.double()
    probs = torch.softmax(scaled, dim=-1)
    kth_largest = torch.topk(scaled, top_k).values[..., -1, None]
    kept = scaled >= kth_largest
    return 1.0 - (probs * kept).sum(dim=-1)


def draws_with_top_k(
    *,
    model,
    prompt_ids: list[int],
    sampler: Sampler,
    draws: Draws,
    eos_token_id: int,
    device,
) -> tuple[list[list[int]], list[list[float]]]:
    """(each sample's new ids, each step's probability cut per sample), seeded as temp.json's.

    Generate's arguments are temp.json's but top_k: do_sample, top_p=1.0, the tokenizer's eos.
    """
    recorder = ForwardRecorder(keep_logits=True)
    rows = sampled_rows(
        model=model,
        prompt_ids=prompt_ids,
        sampler=sampler,
        draws=draws,
        eos_token_id=eos_token_id,
        use_cache=True,
        device=device,
        recorder=recorder,
    )
    cuts = []
    for logits in recorder.last_logits:  # one (samples, vocab) per step
        cuts.append(cut_by_top_k(logits / sampler.temperature, sampler.top_k).tolist())
    return rows, cuts


def answer_steps(row: list[int], eos_id: int) -> int:
    """The steps that drew a row's answer: its tokens before eos, and the eos itself."""
    return min(len(cut_at_eos(row, eos_id)) + 1, len(row))


def summarize_top_k(tokenizer, rows: list[list[int]], cuts: list[list[float]]) -> TopKTemperature:
    """One temperature of topk.json from its draws: the answers and the probability cut."""
    eos = tokenizer.eos_token_id
    counted = counted_answers(decoded_answers(tokenizer, rows))
    steps_cut = []
    for sample, row in enumerate(rows):
        for step in range(answer_steps(row, eos)):
            steps_cut.append(cuts[step][sample])
    return TopKTemperature(
        distinct=counted.distinct,
        samples=counted.samples,
        top_share=counted.top_share,
        cut_first=cuts[0][0],
        cut_mean=sum(steps_cut) / len(steps_cut),
        steps=len(steps_cut),
        ids_past_tokenizer=answer_ids_past_tokenizer(tokenizer, rows),
        answers=counted.answers,
    )


def top_k_mass(logits: torch.Tensor, top_k: int) -> float:
    """topk.json's top_k_mass: the probability the top k of one position's logits hold (T = 1, ties
    kept). top-p after top-k counts within them, renormalised: its p is reached within this mass."""
    return 1.0 - float(cut_by_top_k(logits.unsqueeze(0), top_k)[0])


def survivors_after_top_k(logits: torch.Tensor, top_k: int, ps: list[float]) -> dict[str, int]:
    """topk.json's topp: the tokens left after top-k and then MiniMind's top-p, per p."""
    survivors = {}
    for p in ps:
        kept = keep_top_p(keep_top_k(logits.unsqueeze(0).clone(), top_k), p)
        survivors[temperature_key(p)] = int(torch.isfinite(kept).sum())
    return survivors


def measure_topk(
    *,
    sft: Prompted,
    pretrain_model,
    topp_run: RunInfo,
    draws: Draws,
    settings: TopKSettings,
) -> TopK:
    """topk.json: step 5 with top_k on (``sft``: the SFT model on temp's question), step 6 with
    top-k first (the pretrained model, ``topp_run`` its provenance)."""
    tokenizer = sft.tokenizer
    device = sft.device
    run = sft.run
    top_k = settings.top_k
    prefix = settings.prefix
    logits = next_token_logits(pretrain_model, prefix_prompt(tokenizer, prefix), device)
    where = (
        f"{model_named(topp_run.checkpoint, topp_run.dtype)}, the next token after [bos]{prefix}"
    )
    check_logits(logits, where)
    check_top_k(top_k, logits.shape[-1])
    temps = {}
    for temperature in sorted(settings.temperatures):
        what = f"{model_named(run.checkpoint, run.dtype)}, top_k {top_k} at T {temperature}"
        with finite_logits(sft.model, what):
            rows, cuts = draws_with_top_k(
                model=sft.model,
                prompt_ids=sft.prompt_ids,
                sampler=Sampler(temperature=temperature, top_k=top_k),
                draws=draws,
                eos_token_id=tokenizer.eos_token_id,
                device=device,
            )
        temps[temperature_key(temperature)] = summarize_top_k(tokenizer, rows, cuts)
    alone = keep_top_k(logits.unsqueeze(0).clone(), top_k)
    return TopK(
        top_k=top_k,
        temp=temps,
        topp=survivors_after_top_k(logits, top_k, settings.ps),
        top_k_survivors=int(torch.isfinite(alone).sum()),
        top_k_mass=top_k_mass(logits, top_k),
        prefix=prefix,
        samples=draws.samples,
        new_tokens=draws.new_tokens,
        seed=draws.seed,
        prompt=sft.prompt,
        run=dataclasses.replace(run, inputs={**run.inputs, **topp_run.inputs}),  # every file read
        topp_run=topp_run,
    )
