"""latency.json: the stamping streamer in generate (both backends), the figures from its stamps,
eval_llm.py's [Speed] on a fixed clock, and the record the time job writes from its own runs."""

from __future__ import annotations

import itertools

import numpy
import pytest
import reportdata
import torch
from oracles_latency import cost_in_runs
from shapes import prompt_of

from mminfer.measures.time.decide import COST, cost
from mminfer.measures.time.latency import Latency
from mminfer.measures.time.measure import (
    eval_speed,
    percentile,
    run_latency,
    streamer_calls_s,
    streamer_cost,
    time_with_latency,
)
from mminfer.model.generation import GREEDY
from mminfer.records import from_json, to_json
from mminfer.timing.ab import Rounds
from mminfer.timing.clock import LastRead, StampingStreamer


def ticking(step: float = 1.0):
    """A fixed clock: 0, step, 2 step, ... one tick per read."""
    counter = itertools.count()
    return lambda: next(counter) * step


def test_the_streamer_is_truthy_with_no_items_and_stamps_every_put():
    streamer = StampingStreamer(ticking())
    assert bool(streamer) is True
    streamer.put(torch.tensor([[1, 2]]))
    streamer.put(torch.tensor([[3]]))
    streamer.end()
    assert streamer.stamps == [0.0, 1.0] and streamer.ended == 2.0


def stamped_calls(model, new_tokens: int, use_cache: bool) -> tuple[list, StampingStreamer]:
    """The puts generate makes (their tensors) and the streamer that saw them."""
    seen = []

    class Recording(StampingStreamer):
        def put(self, value):
            seen.append(value.clone())
            super().put(value)

    streamer = Recording(ticking())
    prompt = torch.tensor([prompt_of(7)], dtype=torch.long)
    output = model.generate(
        prompt, max_new_tokens=new_tokens, use_cache=use_cache, streamer=streamer, **GREEDY
    )
    return [seen, output], streamer


@pytest.mark.parametrize("use_cache", [True, False])
def test_builtin_generate_puts_the_prompt_once_then_each_token(tiny_model, use_cache):
    (seen, output), streamer = stamped_calls(tiny_model, 5, use_cache)
    assert len(seen) == 1 + 5 and len(streamer.stamps) == 6 and streamer.ended == 6.0
    assert seen[0].tolist() == [prompt_of(7)]
    assert [t.item() for t in seen[1:]] == output[0, 7:].tolist()


@pytest.fixture(scope="module")
def minimind_loaded(load_tiny, minimind_src):
    return load_tiny(backend="minimind", minimind_src=minimind_src)


@pytest.mark.parametrize("use_cache", [True, False])
def test_minimind_generate_and_the_builtin_twin_put_alike(minimind_loaded, tiny_model, use_cache):
    (theirs, their_output), their_streamer = stamped_calls(minimind_loaded.model, 5, use_cache)
    (ours, our_output), our_streamer = stamped_calls(tiny_model, 5, use_cache)
    assert len(theirs) == len(ours) == 1 + 5
    assert [t.tolist() for t in theirs] == [t.tolist() for t in ours]
    assert their_streamer.stamps == our_streamer.stamps and their_streamer.ended == 6.0
    assert torch.equal(their_output, our_output)


def test_a_run_s_figures_from_its_stamps():
    # prompt's put at 0.1, tokens at 1.0, 1.5, 2.5, 3.0 (gaps 0.5, 1.0, 0.5)
    run = run_latency([0.1, 1.0, 1.5, 2.5, 3.0], streamed_s=3.01, seconds=3.02)
    assert run.ttft_s == 1.0 and run.e2e_s == 3.0
    assert run.tpot_s == pytest.approx((3.0 - 1.0) / 3)
    gaps = [0.5, 1.0, 0.5]
    assert run.itl_p50_s == numpy.percentile(gaps, 50)
    assert run.itl_p90_s == pytest.approx(numpy.percentile(gaps, 90))
    assert run.itl_p99_s == pytest.approx(numpy.percentile(gaps, 99))
    assert run.itl_max_s == 1.0


@pytest.mark.parametrize("q", [0, 37, 50, 90, 99, 100])
def test_percentile_is_numpy_s_linear_one(q):
    values = [0.3, 0.1, 0.7, 0.2, 0.9, 0.4, 0.5]
    assert percentile(values, q) == pytest.approx(numpy.percentile(values, q))


def test_eval_speed_is_eval_llm_s_figure_on_a_fixed_clock():
    """eval_llm.py: st = time.time() before generate; [Speed] = tokens / (time.time() - st).
    Replayed on a clock that ticks once a read: st is read 0, the prompt's put 1, each new token
    the next tick; the n-th token is read n + 1 ticks after st, so [Speed] = n / (n + 1)."""
    clock = ticking(0.25)
    st = clock()
    streamer = StampingStreamer(clock)
    streamer.put(None)  # the prompt
    for _ in range(16):
        streamer.put(None)
    runs = [run_latency([s - st for s in streamer.stamps], 0.0, 0.0)]
    for n in (8, 16):
        speed = eval_speed(runs, n)
        assert speed.tokens_per_s == pytest.approx(n / ((n + 1) * 0.25))
        assert speed.ttft_share == pytest.approx(2 / (n + 1))


def test_the_streamer_s_calls_alone_are_timed_against_the_same_loop_without_them():
    # with: start, 9 stamps, the end's, stop -> 11 ticks; without: start, stop -> 1 tick
    assert streamer_calls_s(puts=9, device="cpu", clock=ticking(1e-3)) == pytest.approx(10e-3)


def test_the_streamer_s_cost_is_the_paired_rounds_median_difference():
    streamed = [1.00, 1.04, 0.98, 1.02]  # the cached path's timed runs, in round order
    cost = streamer_cost(
        streamed_s=streamed, unstreamed_s=[0.99, 1.05], calls_s=1e-5, puts=9
    )  # round 1: +0.01, round 2: -0.01
    assert cost.rounds == 2 and cost.with_streamer_s == [1.00, 1.04]
    assert cost.per_run_s == pytest.approx(0.0, abs=1e-12)
    assert cost.with_cache_s == pytest.approx(1.01)


@pytest.mark.parametrize(
    ("streamer_s", "rounds", "finding"),
    [
        (0.001, 5, "same"),  # each round's with / without within 1 +- 5 %
        (0.30, 5, "adds"),  # the runs with it slower in every round, 5 rounds: 94 % coverage
        (-0.30, 5, "faster"),  # the runs without it slower: the machine's drift, not its cost
        (0.30, 2, "undecided"),  # 2 rounds cover the median with 50 %: nothing decided
    ],
)
def test_the_streamer_s_cost_is_decided_by_the_paired_rounds_interval(streamer_s, rounds, finding):
    runs = [1.00, 1.04, 0.98, 1.02, 1.01]
    time = reportdata.time_record(with_cache_runs_s=runs, without_cache_runs_s=[5.0] * 5)
    latency = reportdata.latency_record(time, streamer_s=streamer_s, cost_rounds=rounds)
    assert cost(latency) == finding  # and its check takes that variant alone
    assert [found for found in COST.values() if cost_in_runs(latency, found)] == [finding]


def test_last_read_remembers_the_run_s_start():
    clock = LastRead(ticking())
    assert clock() == 0.0 and clock.last == 0.0 and clock() == 1.0 and clock.last == 1.0


@pytest.fixture(scope="module")
def timed(tiny_model, tiny_run):
    return time_with_latency(
        model=tiny_model,
        prompt_ids=prompt_of(8),
        new_tokens=6,
        rounds=Rounds(warmup=1, runs=3, max_runs=3),
        speed_tokens=[2, 4, 64],
        cost_rounds=2,
        device="cpu",
        run=tiny_run,
    )


def test_latency_comes_from_time_s_own_timed_runs(timed):
    timing, latency = timed
    assert from_json(Latency, to_json(latency)) == latency
    for path, seconds in (
        (latency.with_cache, timing.with_cache_runs_s),
        (latency.without_cache, timing.without_cache_runs_s),
    ):
        assert [run.seconds for run in path.runs] == seconds  # warm-ups out, in order
        for run in path.runs:
            assert len(run.stamps_s) == 1 + 6
            assert 0 < run.stamps_s[0] < run.ttft_s < run.e2e_s <= run.streamed_s
            # the streamer's end-to-end is the time job's clock of the run: what lies between is
            # generate's return and the timing's read (at most 5 ms or 5 %, on a busy machine too)
            sliver = max(5e-3, 0.05 * run.seconds)
            assert 0 <= run.seconds - run.streamed_s <= sliver
            # (run seconds - TTFT) / (N - 1): TPOT but for the same sliver after the last put
            assert (run.seconds - run.ttft_s) / 5 == pytest.approx(run.tpot_s, abs=sliver / 5)
        assert path.ttft_s == sorted(run.ttft_s for run in path.runs)[1]
        assert len(path.step_gap_s) == 5
    assert latency.without_cache.fed == [8 + k for k in range(1, 6)]
    assert latency.with_cache.fed == [1] * 5
    assert latency.speed_tokens == [2, 4] and [s.n for s in latency.with_cache.speed] == [2, 4]
    assert latency.verdict == timing.verdict and latency.runs_done == timing.runs_done
    assert latency.cost.rounds == 2 and latency.cost.puts == 7
    # the runs without the streamer: one after each of the first two timed rounds, paired with
    # that round's cached run
    assert latency.cost.with_streamer_s == timing.with_cache_runs_s[:2]
    # the narrow side's run after each round, after the runs without the streamer
    assert len(timing.narrow_runs_s) == timing.runs_done == 3
    assert len(latency.cost.without_streamer_s) == 2
    assert all(s > 0 for s in latency.cost.without_streamer_s)
