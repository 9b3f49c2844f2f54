"""Prompt-lookup decoding against MiniMind's cached generate -> lookup.json.

Each case (:data:`~mminfer.measures.lookup.lookup.CASES`) is a model and its prompt. On each, the
cached generate runs once with a forward recorder (its ids and each step's logits: where the loop
parts from it, the top-two gap there); then the loop (mminfer.model.lookup) runs once at every K,
its forward calls and tokens fed counted by a recorder of their own, its cache's bytes after the
last rollback against the formula. Those runs are every side's warm-up. The validation case also
warms a one-token step and a call of K + 1 tokens on its prompt's cache.

Then one interleaved timing (mminfer.timing.ab.time_sides): each round runs every side once, in an
order that turns from round to round: each case's cached generate, the loop at each K whose ids
agree, the one-token step and the wide calls. The loop at K is paired round by round with its
case's cached generate, each wide call with the step; more rounds of the pairs still undecided,
up to time.max_runs.
"""

from __future__ import annotations

import dataclasses
import functools
import statistics
from dataclasses import dataclass

import torch

from mminfer.measures.lookup.decide import faster_of
from mminfer.measures.lookup.lookup import Guessing, Lookup, LookupCase, WideCall
from mminfer.model.cachebytes import config_formula_bytes
from mminfer.model.counting import ForwardRecorder
from mminfer.model.generation import GREEDY, first_divergence, greedy_generate, top2_margin
from mminfer.model.loading import dtype_name
from mminfer.model.lookup import lookup_generate
from mminfer.records import RunInfo, rounding_tolerance
from mminfer.records.interval import (
    look_level,
    median_interval,
    over,
    ratio_interval,
)
from mminfer.timing.ab import Rounds, SidesTiming, time_sides
from mminfer.timing.clock import clock_name
from mminfer.timing.machine import phase


@dataclass(frozen=True)
class LookupSettings:
    """Config section lookup: the n-gram looked up and the numbers of guesses K; and the chat
    case's prompt (config keys temp.question and temp.chatml_fallback)."""

    ngram: int
    guesses: tuple[int, ...]
    question: str = ""
    chatml_fallback: bool = False


@dataclass(frozen=True)
class Case:
    """One prompt the loop runs on: its model (opened), prompt ids and provenance."""

    name: str  # one of CASES
    model: object
    prompt_ids: list[int]
    device: object
    run: RunInfo


@dataclass
class Checked:
    """A case after its checks: its cached generate's ids and record so far per K, and the work
    of each side to time (its run here was its warm-up)."""

    reference: list[int]
    calls_cached: int  # the cached generate's forward calls, counted
    fed_cached: int  # the tokens it fed, counted
    by_guesses: list[Guessing]
    work: dict


def cached_generate(case: Case, new_tokens: int):
    """MiniMind's cached generate at the task's greedy arguments, the case's side in the rounds."""
    input_ids = torch.tensor([case.prompt_ids], dtype=torch.long, device=case.device)
    return case.model.generate(input_ids, max_new_tokens=new_tokens, use_cache=True, **GREEDY)


def check_case(case: Case, new_tokens: int, settings: LookupSettings) -> Checked:
    """The cached generate's ids and logits, then the loop at every K: its ids against them,
    its counts (a recorder on forward) and its cache's bytes."""
    recorder = ForwardRecorder(keep_logits=True)
    reference = greedy_generate(
        model=case.model,
        prompt_ids=case.prompt_ids,
        new_tokens=new_tokens,
        use_cache=True,
        device=case.device,
        recorder=recorder,
    )
    dtype = next(case.model.parameters()).dtype
    checked = Checked(
        reference=reference,
        calls_cached=len(recorder.fed_per_call),
        fed_cached=sum(recorder.fed_per_call),
        by_guesses=[],
        work={},
    )
    checked.work[f"{case.name}_minimind"] = functools.partial(cached_generate, case, new_tokens)
    for guesses in settings.guesses:
        loop = functools.partial(
            lookup_generate,
            case.model,
            case.prompt_ids,
            new_tokens,
            guesses=guesses,
            ngram=settings.ngram,
            device=case.device,
        )
        counted = ForwardRecorder()
        with counted.watching(case.model):
            run = loop()
        parted = first_divergence(run.ids, reference)
        margin = tolerance = None
        if parted is not None:
            logits = recorder.last_logits[parted][0]
            margin = top2_margin(logits)
            tolerance = rounding_tolerance(dtype_name(dtype)) * (1.0 + float(logits.abs().max()))
        else:
            checked.work[f"{case.name}_{guesses}"] = loop
        checked.by_guesses.append(
            Guessing(
                guesses=guesses,
                same_ids=parted is None,
                first_divergence=parted,
                top2_margin=margin,
                tolerance=tolerance,
                calls=len(counted.fed_per_call),
                fed=sum(counted.fed_per_call),
                proposed=run.proposed,
                accepted=run.accepted,
                accepted_per_call=run.accepted_per_call,
                cache_positions=run.cache_positions,
                cache_bytes=run.cache_bytes,
                formula_bytes=config_formula_bytes(
                    config=case.model.config,
                    tokens=run.cache_positions,
                    bytes_per_element=torch.empty((), dtype=dtype).element_size(),
                ),
            )
        )
    return checked


def wide_work(case: Case, reference: list[int], guesses: tuple[int, ...]) -> dict:
    """A one-token step and a call of K + 1 tokens for every K with K + 1 <= N (the reference's
    tokens are what it feeds), each on the prompt's cache (the forward returns a new cache and
    leaves the one given alone): {side: one call}, each called once here (its warm-up)."""
    prompt = torch.tensor([case.prompt_ids], dtype=torch.long, device=case.device)
    with torch.inference_mode():
        cache = case.model(prompt, use_cache=True).past_key_values

    @torch.inference_mode()
    def call(width: int):
        fed = torch.tensor([reference[:width]], dtype=torch.long, device=case.device)
        return case.model(fed, past_key_values=cache, use_cache=True)

    work = {"step": functools.partial(call, 1)}
    for k in guesses:
        if k + 1 <= len(reference):
            work[f"wide_{k}"] = functools.partial(call, k + 1)
    for one in work.values():
        one()
    return work


def measure_lookup(
    *,
    cases: list[Case],
    new_tokens: int,
    rounds: Rounds,
    settings: LookupSettings,
) -> Lookup:
    """lookup.json (see the module's docstring): every case's checks, which are its warm-ups,
    then one interleaved timing of every side; ``cases`` in CASES' order, each one's P + N within
    its model's positions (the jobs open them so)."""
    with phase("checks", "the cached generate and the loop at every K, once each"):
        checked = {case.name: check_case(case, new_tokens, settings) for case in cases}
        work, pairs = {}, []
        for case in cases:  # each loop against its case's cached generate
            cached = f"{case.name}_minimind"
            work.update(checked[case.name].work)
            pairs += [(name, cached) for name in checked[case.name].work if name != cached]
        validation = next((case for case in cases if case.name == "validation"), None)
        if validation is not None:
            wide = wide_work(validation, checked["validation"].reference, settings.guesses)
            work.update(wide)
            pairs += [("step", name) for name in wide if name != "step"]
    every_input = {path: digest for case in cases for path, digest in case.run.inputs.items()}
    with phase("rounds", f"{len(work)} sides a round: {', '.join(work)}"):
        timed = time_sides(work=work, pairs=pairs, device=cases[0].device, rounds=rounds, warmup=0)
    return Lookup(
        ngram=settings.ngram,
        guesses=list(settings.guesses),
        cases={
            case.name: case_record(case, checked[case.name], timed, new_tokens) for case in cases
        },
        clock=clock_name(),
        threads=torch.get_num_threads(),
        contention=timed.contention,
        run=dataclasses.replace(cases[0].run, inputs=every_input),
    )


def case_record(case: Case, checked: Checked, timed: SidesTiming, new_tokens: int) -> LookupCase:
    """A case's record: each K's counts from its checks, its runs from the timing."""
    cached_side = f"{case.name}_minimind"
    level = look_level(timed.runs, timed.max_runs)
    for guessing in checked.by_guesses:
        side = f"{case.name}_{guessing.guesses}"
        if case.name == "validation" and timed.runs_of(f"wide_{guessing.guesses}"):
            wide_runs_s, step_runs_s = timed.paired(f"wide_{guessing.guesses}", "step")
            guessing.wide = WideCall(
                width=guessing.guesses + 1,
                wide_runs_s=wide_runs_s,
                step_runs_s=step_runs_s,
                runs=timed.runs,
                max_runs=timed.max_runs,
                ratio_interval=ratio_interval(wide_runs_s, step_runs_s, level),
            )
        if side not in checked.work:
            continue
        loop_runs_s, cached_runs_s = timed.paired(side, cached_side)
        loop = median_interval(loop_runs_s, level)
        cached = median_interval(cached_runs_s, level)
        guessing.lookup_runs_s, guessing.minimind_runs_s = loop_runs_s, cached_runs_s
        guessing.runs, guessing.max_runs = timed.runs, timed.max_runs
        guessing.lookup_interval = loop
        guessing.speedup = statistics.median(cached_runs_s) / statistics.median(loop_runs_s)
        guessing.speedup_interval = over(cached, loop, [cached, loop])
        guessing.faster = faster_of(guessing)
    prompt_len = len(case.prompt_ids)
    return LookupCase(
        prompt=case.name,
        prompt_len=prompt_len,
        new_tokens=new_tokens,
        calls_cached=checked.calls_cached,
        fed_cached=checked.fed_cached,
        minimind_interval=median_interval(timed.runs_of(cached_side), level),
        by_guesses=checked.by_guesses,
        run=case.run,
    )
