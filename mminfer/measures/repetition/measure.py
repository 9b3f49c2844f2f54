"""What generate's repetition_penalty changes, and what it costs -> repetition.json.

MiniMind's generate divides the positive logits of every token a row has seen (the prompt
included) by the penalty and multiplies the negative ones, in a Python loop over the rows, every
step; 1.0 skips it. Measured three ways:

- the answers: temp's question, seed, samples and new tokens at one temperature, top_k=0,
  top_p=1.0, per penalty: the distinct answers and those that loop (some run of ``LOOP_NGRAM``
  ids comes back). Penalty 1.0 draws exactly temp.json's answers at that temperature;
- greedy after step 1's prompt per penalty: the first step where the ids leave plain greedy's,
  and its repeated ``LOOP_NGRAM``-grams (where a loop shows when the samples do not loop);
- the cost: the whole sampled generation of every sample with the penalty farthest from 1.0 and
  without,
  interleaved after warm-ups (as time.json), every step run (no eos) so both sides do the same
  steps; the medians, per step and in all, their spreads, a verdict and the penalty's share.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import torch

from mminfer.measures.repetition.decide import decide_penalty_costs
from mminfer.measures.repetition.repetition import Penalty, PenaltyTiming, Repetition
from mminfer.model import draws as sampling
from mminfer.model.draws import (
    answer_ids_past_tokenizer,
    counted_answers,
    cut_at_eos,
    decoded_answers,
    sampled_rows,
    temperature_key,
)
from mminfer.model.finite import check_logits, finite_logits, model_named
from mminfer.model.generation import GREEDY, first_divergence
from mminfer.records.interval import Interval, median_interval
from mminfer.timing.ab import A_NOT_FASTER, A_SPREAD, B_SPREAD, ABTiming, Rounds, Sides, time_ab


@dataclass(frozen=True)
class RepetitionSettings:
    """What the repetition rule measures besides temp's draws and the rounds (its params of the
    same names)."""

    question: str  # temp.question, asked of the SFT model
    chatml_fallback: bool  # temp.chatml_fallback
    temperature: float  # repetition.temperature, of every sampled answer
    penalties: list[float]  # repetition.penalties
    greedy_new_tokens: int  # cache.new_tokens, of greedy after step 1's prompt


LOOP_NGRAM = 3  # an answer loops when some run of this many ids comes back in it
PENALTY_SIDES = Sides(  # the penalty-free run as side a, the faster
    doubts={
        A_NOT_FASTER: "penalty_not_slower",
        B_SPREAD: "with_penalty_spread",
        A_SPREAD: "without_penalty_spread",
    },
    contradictions=("penalty_not_slower",),  # more work cannot cost nothing: a busy machine
)


@torch.inference_mode()
def greedy_with_penalty(model, prompt_ids: list[int], penalty: float, new_tokens: int, device):
    """The new ids of step 1's greedy generation (top_k=0, eos None) with ``penalty``."""
    input_ids = torch.tensor([prompt_ids], dtype=torch.long, device=device)
    output = model.generate(
        input_ids, max_new_tokens=new_tokens, repetition_penalty=penalty, **GREEDY
    )
    return output[0, len(prompt_ids) :].tolist()


def loops(ids: list[int], n: int = LOOP_NGRAM) -> bool:
    """Does some run of ``n`` consecutive ids come back later in ``ids``?"""
    seen = set()
    for start in range(len(ids) - n + 1):
        gram = tuple(ids[start : start + n])
        if gram in seen:
            return True
        seen.add(gram)
    return False


def repeated_ngrams(ids: list[int], n: int = LOOP_NGRAM) -> int:
    """repetition.json's greedy_repeated_ngrams: the runs of ``n`` consecutive ids in ``ids`` that
    repeat an earlier run (every n-gram position less the distinct n-grams): 0 where nothing
    comes back, and more the longer a loop goes on."""
    grams = [tuple(ids[start : start + n]) for start in range(len(ids) - n + 1)]
    return len(grams) - len(set(grams))


def summarize_penalty(
    tokenizer, rows: list[list[int]], greedy_ids: list[int], plain_greedy: list[int]
) -> Penalty:
    """One penalty of repetition.json from its draws and its greedy ids."""
    eos = tokenizer.eos_token_id
    counted = counted_answers(decoded_answers(tokenizer, rows))
    return Penalty(
        distinct=counted.distinct,
        samples=counted.samples,
        looping=sum(loops(cut_at_eos(row, eos)) for row in rows),
        top_share=counted.top_share,
        ids_past_tokenizer=answer_ids_past_tokenizer(tokenizer, rows),
        answers=counted.answers,
        greedy_ids=greedy_ids,
        greedy_repeated_ngrams=repeated_ngrams(greedy_ids),
        greedy_first_divergence=first_divergence(greedy_ids, plain_greedy),
    )


def time_penalty(
    *,
    model,
    prompt_ids: list[int],
    sampler: sampling.Sampler,
    draws: sampling.Draws,
    rounds: Rounds,
    device,
) -> PenaltyTiming:
    """The whole sampled generation with ``sampler``'s penalty and without (1.0), interleaved,
    timed."""
    penalty = sampler.repetition_penalty
    new_tokens = draws.new_tokens
    without = dataclasses.replace(sampler, repetition_penalty=1.0)

    def draw(without_penalty: bool) -> None:  # side a: the faster side, without the penalty
        applied = sampler
        if without_penalty:
            applied = without
        sampled_rows(
            model=model,
            prompt_ids=prompt_ids,
            sampler=applied,
            draws=draws,
            eos_token_id=None,
            use_cache=True,
            device=device,
        )

    timed = time_ab(
        work=draw,
        sides=PENALTY_SIDES,
        device=device,
        rounds=rounds,
    )
    return penalty_timing(
        timed,
        penalty=penalty,
        rows=draws.samples,
        steps=new_tokens,
        tokens_seen=len(prompt_ids) + new_tokens,
    )


def per_step(interval: Interval, steps: int) -> Interval:
    """An interval of a whole generation's seconds as seconds per step."""
    return dataclasses.replace(
        interval,
        median=interval.median / steps,
        low=interval.low / steps,
        high=interval.high / steps,
    )


def penalty_timing(
    timed: ABTiming, *, penalty: float, rows: int, steps: int, tokens_seen: int
) -> PenaltyTiming:
    """repetition.json's timing from the A/B timing of the penalty-free run (side a) against the
    penalty's (side b): medians and their intervals in all and per step, and the per-round share
    (with - without) / with with its interval, decided as the per-round ratio with / without is
    (mminfer.records.interval.ratio_decision)."""
    with_s = timed.b_s
    without_s = timed.a_s
    shares = [
        (with_run - without_run) / with_run
        for with_run, without_run in zip(timed.b_runs_s, timed.a_runs_s)
    ]
    share = median_interval(shares, timed.ratio_interval.level)
    return PenaltyTiming(
        penalty=penalty,
        rows=rows,
        steps=steps,
        tokens_seen=tokens_seen,
        with_penalty_s=with_s,
        without_penalty_s=without_s,
        per_step_with_penalty_s=with_s / steps,
        per_step_without_penalty_s=without_s / steps,
        penalty_share=share.median,
        with_penalty_interval=timed.b_interval,
        without_penalty_interval=timed.a_interval,
        per_step_with_penalty_interval=per_step(timed.b_interval, steps),
        per_step_without_penalty_interval=per_step(timed.a_interval, steps),
        penalty_share_interval=share,
        penalty_costs=decide_penalty_costs(
            timed.b_runs_s, timed.a_runs_s, timed.runs, timed.max_runs
        ),
        cv_with_penalty=timed.cv_b,
        cv_without_penalty=timed.cv_a,
        with_penalty_runs_s=timed.b_runs_s,
        without_penalty_runs_s=timed.a_runs_s,
        **timed.shared(),  # the rounds, doubts, verdict and conditions, under these names
    )


def measure_repetition(
    *,
    sft: sampling.Prompted,
    greedy: sampling.Prompted,
    settings: RepetitionSettings,
    draws: sampling.Draws,
    rounds: Rounds,
) -> Repetition:
    """repetition.json (see the module's docstring): answers, greedy and cost per penalty.

    ``sft``: the SFT model on temp's question; ``greedy``: the pretrained model on step 1's prompt.
    """
    tokenizer = sft.tokenizer
    device = sft.device
    run = sft.run
    greedy_run = greedy.run
    temperature = settings.temperature
    greedy_new_tokens = settings.greedy_new_tokens
    named = model_named(run.checkpoint, run.dtype)
    greedy_named = model_named(greedy_run.checkpoint, greedy_run.dtype)
    with finite_logits(greedy.model, f"{greedy_named}, greedy without a penalty"):
        plain_greedy = greedy_with_penalty(
            greedy.model, greedy.prompt_ids, 1.0, greedy_new_tokens, device
        )
    results = {}
    for penalty in settings.penalties:
        sampler = sampling.Sampler(temperature=temperature, repetition_penalty=penalty)
        with finite_logits(sft.model, f"{named}, sampling with repetition_penalty {penalty}"):
            rows = sampled_rows(
                model=sft.model,
                prompt_ids=sft.prompt_ids,
                sampler=sampler,
                draws=draws,
                eos_token_id=tokenizer.eos_token_id,
                use_cache=True,
                device=device,
            )
        with finite_logits(greedy.model, f"{greedy_named}, greedy, penalty {penalty}"):
            greedy_ids = greedy_with_penalty(
                greedy.model, greedy.prompt_ids, penalty, greedy_new_tokens, device
            )
        results[temperature_key(penalty)] = summarize_penalty(
            tokenizer, rows, greedy_ids, plain_greedy
        )
    timing = None
    timed = max(settings.penalties, key=lambda penalty: abs(penalty - 1.0))  # the farthest from off
    if timed != 1.0:
        with torch.inference_mode():  # the timed runs keep no logits: checked once, here
            input_ids = torch.tensor([sft.prompt_ids], dtype=torch.long, device=device)
            logits = sft.model(input_ids).logits[0, -1, :]
        check_logits(logits, f"{named}, after the chat prompt")
        timing = time_penalty(
            model=sft.model,
            prompt_ids=sft.prompt_ids,
            sampler=sampling.Sampler(temperature=temperature, repetition_penalty=timed),
            draws=draws,
            rounds=rounds,
            device=device,
        )
    return Repetition(
        temperature=temperature,
        penalties=results,
        loop_ngram=LOOP_NGRAM,
        samples=draws.samples,
        new_tokens=draws.new_tokens,
        seed=draws.seed,
        greedy_new_tokens=greedy_new_tokens,
        timing=timing,
        prompt=sft.prompt,
        greedy_prompt=greedy.prompt,
        run=dataclasses.replace(run, inputs={**run.inputs, **greedy_run.inputs}),  # every file read
        greedy_run=greedy_run,
    )
