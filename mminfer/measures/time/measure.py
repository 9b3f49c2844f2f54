"""Step 3: how long greedy generation takes with and without the cache, and how far to trust it.

The two methods are timed as an interleaved A/B job (mminfer.timing.ab): warm-ups of both, then
rounds of (with cache, without cache) so that a burst of load lands on both; every run kept;
medians and spreads; more rounds while the cache side is not faster or a spread is over NOISY_CV;
what stays in doubt is written down with threads and load average. The clock is the device's
(mminfer.timing.clock: on CUDA the device is synchronized before every read).

A third side rides in the same rounds (:class:`NarrowSide`): the narrow model's cached generate
(mminfer.model.narrow: the same class at minimal width) at the same P and N, warmed up before the
rounds and timed once after each timed round (extra rounds included), so that the lower bound it
gives of the cached path's fixed cost is taken under the load of the runs it bounds.
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Callable

import torch

from mminfer.measures.time.decide import decide_cache_faster
from mminfer.measures.time.latency import (
    LIMITS_SOURCE,
    TPOT_LIMIT_S,
    TTFT_LIMIT_S,
    EvalSpeed,
    Latency,
    PathLatency,
    RunLatency,
    StreamerCost,
)
from mminfer.measures.time.time import Timing
from mminfer.model.generation import GREEDY
from mminfer.model.narrow import minimal_width, narrow_shape
from mminfer.records import RunInfo, rates
from mminfer.records.interval import (
    look_level,
    median_interval,
    paired_ratios,
    ratio_interval,
)
from mminfer.records.spread import coefficient_of_variation
from mminfer.timing.ab import A_NOT_FASTER, A_SPREAD, B_SPREAD, ABTiming, Rounds, Sides, time_ab
from mminfer.timing.clock import LastRead, StampingStreamer, device_clock, stamp_clock

CACHE_SIDES = Sides(  # the cache as side a; a cache side not faster makes a timing "untrusted"
    doubts={
        A_NOT_FASTER: "cache_not_faster",
        A_SPREAD: "with_cache_spread",
        B_SPREAD: "without_cache_spread",
    },
    contradictions=("cache_not_faster",),
)
ORDER = (
    "interleaved: warm-ups of both and of the narrow model, then rounds of (with cache, without "
    "cache), each followed by the narrow model's cached generate"
)


class NarrowSide:
    """The time job's third side: the narrow model's cached greedy generate (mminfer.model.narrow),
    its warm-ups apart from its runs, one run after each timed round (:meth:`after_round`, time_ab's
    hook).

    Built once from the real model (:func:`minimal_width`); its prompt is P ones (its vocabulary
    is 2), its N new tokens greedy with no eos. Each run is read by ``clock``, the stamps' clock
    (mminfer.timing.clock.stamp_clock): the device's clock, the same seconds as the timing's,
    read between the timing's own reads. Under the tests' jitter such reads keep the factor of
    the gap they fall in instead of stepping its sequence, so the cached runs of two rounds stay
    as many steps apart as without the narrow side (two more steps a round would put them 8
    apart in the streamer's cost rounds, 0.06 of a turn: two rounds would look quiet). Where the
    timed cached run carries a streamer, ``stamping`` is true: each narrow run then carries a
    StampingStreamer on ``clock`` too, made after the run's start as the cached run's is, so
    that both do the same per-call streamer work.
    """

    def __init__(
        self,
        *,
        model,
        prompt_len: int,
        new_tokens: int,
        device,
        clock: Callable[[], float],
        stamping: bool,
    ):
        self.model = minimal_width(model)
        self.input_ids = torch.ones((1, prompt_len), dtype=torch.long, device=device)
        self.new_tokens = new_tokens
        self.clock = clock
        self.stamping = stamping
        self.warmup_s: list[float] = []
        self.runs_s: list[float] = []

    def generate(self) -> float:
        """One narrow generate, in seconds."""
        start = self.clock()
        streamer = StampingStreamer(self.clock) if self.stamping else None
        self.model.generate(
            self.input_ids,
            max_new_tokens=self.new_tokens,
            use_cache=True,
            streamer=streamer,
            **GREEDY,
        )
        return self.clock() - start

    def warm(self, rounds: int) -> None:
        """``rounds`` untimed generates (their seconds kept apart) before the timed rounds."""
        for _ in range(rounds):
            self.warmup_s.append(self.generate())

    def after_round(self) -> None:
        """The narrow run of the round just timed."""
        self.runs_s.append(self.generate())

    def shape(self) -> dict[str, int]:
        """time.json's ``narrow_shape``: the narrow model's widths, layers and heads."""
        return narrow_shape(self.model)


def time_cache(
    *,
    model,
    prompt_ids: list[int],
    new_tokens: int,
    rounds: Rounds,
    device,
    run: RunInfo,
) -> Timing:
    """time.json: time greedy generation with and without the cache (see the module's docstring).

    Without the streamer (scripts/plain_task.py's time.json, the benchmark's yardstick): its
    narrow side carries none either, as its cached runs carry none, and it is timed all the same,
    so that the yardstick does the time rule's work and its time.json holds every key.
    """
    input_ids = torch.tensor([prompt_ids], dtype=torch.long, device=device)
    narrow = NarrowSide(
        model=model,
        prompt_len=len(prompt_ids),
        new_tokens=new_tokens,
        device=device,
        clock=stamp_clock(device),
        stamping=False,
    )

    def generate(use_cache: bool) -> None:
        model.generate(input_ids, max_new_tokens=new_tokens, use_cache=use_cache, **GREEDY)

    narrow.warm(rounds.warmup)
    timed = time_ab(
        work=generate,
        sides=CACHE_SIDES,
        device=device,
        rounds=rounds,
        after_round=narrow.after_round,
    )
    return timing_record(
        timed=timed,
        narrow_runs_s=narrow.runs_s,
        narrow_warmup_s=narrow.warmup_s,
        narrow_shape=narrow.shape(),
        prompt_len=len(prompt_ids),
        new_tokens=new_tokens,
        run=run,
    )


def time_with_latency(
    *,
    model,
    prompt_ids: list[int],
    new_tokens: int,
    rounds: Rounds,
    speed_tokens: list[int],
    cost_rounds: int,
    device,
    run: RunInfo,
) -> tuple[Timing, Latency]:
    """time.json and latency.json from one timing: every run carries a stamping streamer.

    The streamer stamps each of generate's puts with the clock that reads the run's start and end
    (mminfer.timing.clock.StampingStreamer); the timed runs' stamps (warm-ups out) make
    latency.json.
    After each of the first ``cost_rounds`` timed rounds, outside the timed runs, the cached path
    runs once more without the streamer: against that round's cached run, what the streamer adds
    (:func:`streamer_cost`). Then, after every timed round, the narrow side's run
    (:class:`NarrowSide`, carrying a stamping streamer as the cached runs do); its warm-ups come
    before the rounds.
    """
    input_ids = torch.tensor([prompt_ids], dtype=torch.long, device=device)
    clock = LastRead(device_clock(device))
    stamps = stamp_clock(device)  # the same seconds, read inside the run
    narrow = NarrowSide(
        model=model,
        prompt_len=len(prompt_ids),
        new_tokens=new_tokens,
        device=device,
        clock=stamps,
        stamping=True,
    )
    streams: dict[bool, list[tuple[float, StampingStreamer]]] = {True: [], False: []}
    unstreamed_s: list[float] = []  # the cached path without the streamer, one per paired round

    def generate(use_cache: bool) -> None:
        start = clock.last  # the timing's read just before this call: the run's start
        streamer = StampingStreamer(stamps)
        model.generate(
            input_ids,
            max_new_tokens=new_tokens,
            use_cache=use_cache,
            streamer=streamer,
            **GREEDY,
        )
        streams[use_cache].append((start, streamer))

    def unstreamed() -> None:
        if len(unstreamed_s) >= cost_rounds:
            return
        start = clock()
        model.generate(input_ids, max_new_tokens=new_tokens, use_cache=True, **GREEDY)
        unstreamed_s.append(clock() - start)

    def after_round() -> None:
        unstreamed()  # right after the round's runs, as the streamer's cost pairs them
        narrow.after_round()

    narrow.warm(rounds.warmup)
    timed = time_ab(
        work=generate,
        sides=CACHE_SIDES,
        device=device,
        rounds=rounds,
        clock=clock,
        after_round=after_round,
    )
    timing = timing_record(
        timed=timed,
        narrow_runs_s=narrow.runs_s,
        narrow_warmup_s=narrow.warmup_s,
        narrow_shape=narrow.shape(),
        prompt_len=len(prompt_ids),
        new_tokens=new_tokens,
        run=run,
    )
    cost = streamer_cost(
        streamed_s=timed.a_runs_s,
        unstreamed_s=unstreamed_s,
        calls_s=streamer_calls_s(puts=1 + new_tokens, device=device),
        puts=1 + new_tokens,
    )
    latency = latency_record(
        timing=timing,
        with_cache=[runs_of(start, s) for start, s in streams[True][timed.warmup :]],
        without_cache=[runs_of(start, s) for start, s in streams[False][timed.warmup :]],
        speed_tokens=speed_tokens,
        cost=cost,
    )
    return timing, latency


def runs_of(start: float, streamer: StampingStreamer) -> tuple[list[float], float]:
    """A run's stamps from its start, and its end()'s."""
    return [stamp - start for stamp in streamer.stamps], streamer.ended - start


def percentile(values: list[float], q: float) -> float:
    """The ``q``-th percentile (0-100) of ``values``, linearly between the nearest ranks (as
    numpy's default and vLLM's benchmark report)."""
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    position = (len(ordered) - 1) * q / 100
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def run_latency(stamps_s: list[float], streamed_s: float, seconds: float) -> RunLatency:
    """One run's figures from its stamps (from its start): [0] the prompt's put, then one per new
    token; ``seconds`` the time job's clock of it."""
    tokens = stamps_s[1:]
    gaps = [later - earlier for earlier, later in itertools.pairwise(tokens)] or [0.0]
    ttft, e2e = tokens[0], tokens[-1]
    return RunLatency(
        seconds=seconds,
        streamed_s=streamed_s,
        stamps_s=stamps_s,
        ttft_s=ttft,
        e2e_s=e2e,
        tpot_s=(e2e - ttft) / (len(tokens) - 1) if len(tokens) > 1 else 0.0,
        itl_p50_s=percentile(gaps, 50),
        itl_p90_s=percentile(gaps, 90),
        itl_p99_s=percentile(gaps, 99),
        itl_max_s=max(gaps),
    )


def eval_speed(runs: list[RunLatency], n: int) -> EvalSpeed:
    """eval_llm.py's [Speed] for the first ``n`` tokens, each run: n / (its n-th token's stamp),
    the time counted from before generate is called, as eval_llm.py's ``st``."""
    speeds = [rates.tokens_per_s(n, run.stamps_s[n]) for run in runs]
    middle = sorted(runs, key=lambda run: run.stamps_s[n])[(len(runs) - 1) // 2]
    return EvalSpeed(
        n=n,
        tokens_per_s=statistics.median(speeds),
        runs_tokens_per_s=speeds,
        ttft_share=middle.ttft_s / middle.stamps_s[n],
    )


def path_latency(
    *,
    stamped: list[tuple[list[float], float]],
    seconds: list[float],
    prompt_len: int,
    use_cache: bool,
    speed_tokens: list[int],
    level: float,
) -> PathLatency:
    """One path's latency over its timed runs (stamps and the time job's seconds, in order); its
    TTFT's and TPOT's intervals at ``level`` (the time job's per-look level)."""
    runs = [run_latency(stamps, streamed, s) for (stamps, streamed), s in zip(stamped, seconds)]
    gaps = [
        [later - earlier for earlier, later in zip(run.stamps_s[1:], run.stamps_s[2:])]
        for run in runs
    ]
    pooled = [gap for run_gaps in gaps for gap in run_gaps] or [0.0]
    steps = list(zip(*gaps))
    context = [prompt_len + k for k in range(1, len(steps) + 1)]
    tpot = statistics.median(run.tpot_s for run in runs)
    new_tokens = len(runs[0].stamps_s) - 1
    return PathLatency(
        ttft_s=statistics.median(run.ttft_s for run in runs),
        tpot_s=tpot,
        ttft_interval=median_interval([run.ttft_s for run in runs], level),
        tpot_interval=median_interval([run.tpot_s for run in runs], level),
        e2e_s=statistics.median(run.e2e_s for run in runs),
        cv_ttft=coefficient_of_variation([run.ttft_s for run in runs]),
        cv_tpot=coefficient_of_variation([run.tpot_s for run in runs]),
        cv_e2e=coefficient_of_variation([run.e2e_s for run in runs]),
        itl_p50_s=percentile(pooled, 50),
        itl_p90_s=percentile(pooled, 90),
        itl_p99_s=percentile(pooled, 99),
        itl_max_s=max(pooled),
        ttft_p99_s=percentile([run.ttft_s for run in runs], 99),
        tpot_p99_s=percentile([run.tpot_s for run in runs], 99),
        decode_tokens_per_s=rates.tokens_per_s(1, tpot),
        step_gap_s=[statistics.median(step) for step in steps],
        step_gap_low_s=[min(step) for step in steps],
        step_gap_high_s=[max(step) for step in steps],
        context=context,
        fed=[1 if use_cache else c for c in context],
        speed=[eval_speed(runs, n) for n in speed_tokens if n <= new_tokens],
        runs=runs,
    )


def latency_record(
    *,
    timing: Timing,
    with_cache: list[tuple[list[float], float]],
    without_cache: list[tuple[list[float], float]],
    speed_tokens: list[int],
    cost: StreamerCost,
) -> Latency:
    """latency.json from the timed runs' stamps of both paths, beside time.json's record."""
    level = look_level(timing.runs, timing.max_runs)
    both = {
        "with_cache": path_latency(
            stamped=with_cache,
            seconds=timing.with_cache_runs_s,
            prompt_len=timing.prompt_len,
            use_cache=True,
            speed_tokens=speed_tokens,
            level=level,
        ),
        "without_cache": path_latency(
            stamped=without_cache,
            seconds=timing.without_cache_runs_s,
            prompt_len=timing.prompt_len,
            use_cache=False,
            speed_tokens=speed_tokens,
            level=level,
        ),
    }
    return Latency(
        prompt_len=timing.prompt_len,
        new_tokens=timing.new_tokens,
        warmup=timing.warmup,
        runs_done=timing.runs_done,
        verdict=timing.verdict,
        doubts=timing.doubts,
        noisy_cv=timing.noisy_cv,
        speed_tokens=[n for n in speed_tokens if n <= timing.new_tokens],
        cost=cost,
        ttft_limit_s=TTFT_LIMIT_S,
        tpot_limit_s=TPOT_LIMIT_S,
        limits_source=LIMITS_SOURCE,
        clock=timing.clock,
        threads=timing.threads,
        contention=timing.contention,
        run=timing.run,
        **both,
    )


COST_METHOD = (
    "after each of the first latency.cost_rounds timed rounds, outside the timed runs, the cached "
    "path's generate once more without the streamer (the run the task describes), against that "
    "round's cached run with it; the device's clock"
)
CALL_ROUNDS = 5  # rounds of the streamer's calls alone, against the same loop without them


def streamer_cost(
    *, streamed_s: list[float], unstreamed_s: list[float], calls_s: float, puts: int
) -> StreamerCost:
    """What the streamer adds to a cached run, from paired runs with and without it.

    ``streamed_s``: the cached path's timed runs (each carried the streamer), in round order;
    ``unstreamed_s``: the runs without it, one after each of the first rounds. The cost is the
    median of the rounds' differences (signed); whether the runs tell it from their noise is the
    report's judgement (records.latency.cost_claims).
    """
    paired = streamed_s[: len(unstreamed_s)]
    differences = [a - b for a, b in zip(paired, unstreamed_s)]
    return StreamerCost(
        puts=puts,
        rounds=len(unstreamed_s),
        with_streamer_s=paired,
        without_streamer_s=unstreamed_s,
        per_run_s=statistics.median(differences),
        with_cache_s=statistics.median(streamed_s),
        calls_s=calls_s,
        method=COST_METHOD,
    )


def streamer_calls_s(*, puts: int, device, rounds: int = CALL_ROUNDS, clock=None) -> float:
    """The streamer's calls alone in one run: ``puts`` puts of a (1, 1) id tensor, each
    ``.cpu()``'d as generate does, and end(), against the same loop without the streamer;
    interleaved rounds, the median difference (at least 0)."""
    clock = clock or device_clock(device)
    token = torch.zeros((1, 1), dtype=torch.long, device=device)

    def loop(streamer) -> float:
        start = clock()
        for _ in range(puts):
            if streamer:
                streamer.put(token.cpu())
        if streamer:
            streamer.end()
        return clock() - start

    with_s, without_s = [], []
    for _ in range(rounds):
        with_s.append(loop(StampingStreamer(clock)))
        without_s.append(loop(None))
    return max(statistics.median(with_s) - statistics.median(without_s), 0.0)


def timing_record(
    *,
    timed: ABTiming,
    narrow_runs_s: list[float],
    narrow_warmup_s: list[float],
    narrow_shape: dict[str, int],
    prompt_len: int,
    new_tokens: int,
    run: RunInfo,
) -> Timing:
    """time.json's record from the A/B timing, the cache as side a, and its narrow side's runs
    (one after each timed round, in round order: :class:`NarrowSide`).

    with_cache_s, without_cache_s and speedup (without / with) first, the speedup's two intervals
    (of the per-round ratios, which decides cache_faster, and of the ratio of the medians), then
    every run, the narrow side's runs and its share of each round's cached run, the spreads, the
    verdict and the conditions: threads, cores, load average before and after, the clock.
    """
    level = look_level(timed.runs, timed.max_runs)
    return Timing(
        with_cache_s=timed.a_s,
        without_cache_s=timed.b_s,
        speedup=timed.b_s / timed.a_s,
        with_cache_interval=timed.a_interval,
        without_cache_interval=timed.b_interval,
        speedup_interval=timed.ratio_interval,
        cache_faster=decide_cache_faster(
            timed.b_runs_s, timed.a_runs_s, timed.runs, timed.max_runs
        ),
        prompt_len=prompt_len,
        new_tokens=new_tokens,
        order=ORDER,
        cv_with_cache=timed.cv_a,
        cv_without_cache=timed.cv_b,
        with_cache_runs_s=timed.a_runs_s,
        without_cache_runs_s=timed.b_runs_s,
        with_cache_warmup_s=timed.a_warmup_s,
        without_cache_warmup_s=timed.b_warmup_s,
        narrow_runs_s=narrow_runs_s,
        narrow_warmup_s=narrow_warmup_s,
        narrow_s=statistics.median(narrow_runs_s),
        narrow_shape=narrow_shape,
        fixed_share_runs=paired_ratios(narrow_runs_s, timed.a_runs_s),
        fixed_share_interval=ratio_interval(narrow_runs_s, timed.a_runs_s, level),
        run=run,
        **timed.shared(),  # the rounds, doubts, verdict and conditions, under these names
    )
