"""Timing that stays honest under load (mminfer.measures.time.measure).

The methods are interleaved, every run kept, doubtful timings get more rounds, and the report says
in words what could not be settled. A fake generator with a known true time per method and a burst
of slowness stands in for the machine.
"""

from __future__ import annotations

import itertools
import random
from functools import partial

import pytest
import reportdata
from shapes import prompt_of

from mminfer.measures.time.decide import (
    fixed_cost,
    fixed_share,
    fixed_share_bound,
    speedup_medians,
)
from mminfer.measures.time.measure import (
    CACHE_SIDES,
    NarrowSide,
    time_with_latency,
    timing_record,
)
from mminfer.measures.time.time import Timing
from mminfer.records import RunInfo, from_json, to_json
from mminfer.records.spread import (
    NOISY_CV,
    coefficient_of_variation,
    cv_around_trend,
    cv_within_runs,
)
from mminfer.report.render import render_report
from mminfer.timing import clock as clock_module
from mminfer.timing.ab import Rounds, time_ab, time_sides
from mminfer.timing.clock import JITTER_VARIABLE, device_clock, process_jitter, stamp_clock

TRUE_SECONDS = {True: 1.0, False: 5.0}  # with cache, without cache: the real speedup is 5
NARROW_SECONDS = 0.6  # the narrow model's cached generate: 60 % of the cached one


class FakeMachine:
    """measure(use_cache) -> seconds. Calls numbered from 0 (warm-ups included); calls in ``busy``
    take ``slowdown`` times longer, and only for the method ``busy_method`` when it is given."""

    def __init__(self, busy=range(0), slowdown: float = 4.0, busy_method: bool | None = None):
        self.busy, self.slowdown, self.busy_method = busy, slowdown, busy_method
        self.calls: list[bool] = []

    def __call__(self, use_cache: bool) -> float:
        number = len(self.calls)
        self.calls.append(use_cache)
        seconds = TRUE_SECONDS[use_cache]
        if number in self.busy and self.busy_method in (None, use_cache):
            seconds *= self.slowdown
        return seconds


class FakeClock:
    """A clock that only the fake machine moves: each call of the work adds its seconds, each
    narrow run (after a round) NARROW_SECONDS."""

    def __init__(self, machine: FakeMachine):
        self.machine = machine
        self.now = 0.0
        self.narrow_runs_s: list[float] = []

    def __call__(self) -> float:
        return self.now

    def work(self, use_cache: bool) -> None:
        self.now += self.machine(use_cache)

    def narrow(self) -> None:
        start = self.now
        self.now += NARROW_SECONDS
        self.narrow_runs_s.append(self.now - start)


def timed(machine: FakeMachine, warmup: int = 1, runs: int = 3, max_runs: int = 9) -> Timing:
    clock = FakeClock(machine)
    measured = time_ab(
        work=clock.work,
        sides=CACHE_SIDES,
        device="cpu",
        rounds=Rounds(warmup=warmup, runs=runs, max_runs=max_runs),
        clock=clock,
        after_round=clock.narrow,
    )
    run = from_json(RunInfo, reportdata.RUN)
    return timing_record(
        timed=measured,
        narrow_runs_s=clock.narrow_runs_s,
        narrow_warmup_s=[NARROW_SECONDS] * warmup,
        narrow_shape=reportdata.NARROW_SHAPE,
        prompt_len=201,
        new_tokens=64,
        run=run,
    )


def test_warm_ups_of_both_come_first_then_rounds_alternate():
    machine = FakeMachine()
    timed(machine, warmup=1, runs=3)
    # one warm-up round, then rounds until the speedup's interval decides: 7 that all agree at
    # 97.5 % per look (mminfer.records.interval.look_level(3, 9))
    assert machine.calls == [True, False] * 8


def test_a_quiet_machine_times_until_the_speedup_is_decided():
    result = timed(FakeMachine())
    assert result.runs_done == 7 and result.extra_rounds == 4
    assert result.speedup == 5.0 and result.verdict == "ok" and result.doubts == []
    assert result.cache_faster == "yes"
    assert result.speedup_interval.coverage >= result.speedup_interval.level == 0.975


def test_a_burst_on_both_methods_keeps_the_ratio():
    # calls 2-5 are the first two rounds: a burst of load lands on both methods alike
    result = timed(FakeMachine(busy=range(2, 6)))
    assert result.speedup == pytest.approx(5.0)


def test_a_burst_on_one_method_gets_extra_rounds_that_settle_the_medians():
    # the cached side's first two timed runs are 10x slow: its median says "not faster"
    # after 3 rounds
    result = timed(FakeMachine(busy=range(2, 6), slowdown=10.0, busy_method=True))
    assert result.with_cache_runs_s[:3] == [10.0, 10.0, 1.0]
    assert result.extra_rounds > 0
    assert result.with_cache_s == 1.0 and result.speedup == 5.0
    assert "cache_not_faster" not in result.doubts
    assert result.verdict == "noisy"  # the spread of the kept runs stays on record
    assert result.runs_done == 9


def test_a_machine_busy_throughout_is_untrusted_after_the_bound():
    result = timed(FakeMachine(busy=range(0, 100), slowdown=10.0, busy_method=True), max_runs=7)
    # every round has the cache slower: decided at 95 % per look (3 to 7 rounds) after 6
    assert result.runs_done == 6 and result.cache_faster == "no"
    assert result.verdict == "untrusted" and "cache_not_faster" in result.doubts


def test_max_runs_below_runs_means_no_extra_rounds():
    result = timed(
        FakeMachine(busy=range(0, 100), slowdown=10.0, busy_method=True), runs=3, max_runs=1
    )
    assert result.runs_done == 3


def test_coefficient_of_variation():
    assert coefficient_of_variation([2.0]) == 0.0
    assert coefficient_of_variation([1.0, 3.0]) == pytest.approx(2**0.5 / 2)


def test_the_spread_around_a_trend_leaves_out_steady_growth():
    assert cv_around_trend([1.0, 2.0, 3.0, 4.0, 5.0]) == pytest.approx(0.0, abs=1e-12)
    # jitter on a rising line is judged as if on a flat one at the same mean
    rising = [1.0 + 0.5 * i + off for i, off in enumerate([0.1, -0.1, 0.1, -0.1])]
    flat = [1.75 + off for off in [0.1, -0.1, 0.1, -0.1]]
    assert cv_around_trend(rising) == pytest.approx(cv_around_trend(flat), rel=0.2)
    assert cv_around_trend([1.0, 9.0]) == 0.0  # a line fits any two
    # the median over runs: one run's hiccup does not decide it
    assert cv_within_runs([[1.0, 1.0, 1.0], [1.0, 3.0, 1.0], [1.0, 1.0, 1.0]]) == 0.0


def test_a_quiet_runs_lone_spikes_are_not_a_busy_machine():
    # a quiet course model's cached steps: 2 ms with a 0.05 ms jitter, three steps of 40 jolted
    quiet = [0.002 + 0.00005 * (-1) ** i for i in range(40)]
    for step in (7, 19, 31):
        quiet[step] = 0.010
    assert cv_around_trend(quiet) < NOISY_CV
    # busy: every other step waits for the busy loop's time slice
    busy = [0.002 if i % 2 else 0.0035 for i in range(40)]
    assert cv_around_trend(busy) > NOISY_CV


def time_json(result: Timing) -> Timing:
    """time.json of a fake machine's result, with the hand-made one's conditions and a load that
    rose; its contention the hand-made quiet one's (the meter read this process's CPU time against
    the fake clock's seconds: a 0 % share, busy, that no machine measured)."""
    changes = {
        "noisy_cv": NOISY_CV,
        "threads": 2,
        "cpu_count": 2,
        "load_before": [1.0, 0.5, 0.2],
        "load_after": [2.5, 0.8, 0.3],
        "contention": reportdata.QUIET,
    }
    return reportdata.time_record(**(to_json(result) | changes))


def report_of(timing: Timing) -> str:
    """report.md of hand-made task files around this time.json.

    Fed 264 vs 14,880 tokens: a 56.4x ratio.
    """
    return render_report(reportdata.task_records(time=timing))


# time.cache_faster's "yes" words: the speedup's one figure, then the paired rounds' decision
FASTER = "만큼 빠르다: 라운드"


def test_report_presents_a_quiet_speedup_as_fact():
    text = report_of(time_json(timed(FakeMachine())))
    assert "speedup 5.00배 (96 % 구간 5.00–5.00배)" + FASTER + " 7회를 라운드마다 짝지어" in text
    assert "믿을 만함 (ok)" in text and "스레드 2개" in text and "바쁜 기계" not in text
    assert "1분 부하 평균 1 → 2.5" in text
    # the narrow side, NARROW_SECONDS of every cached round: a share the rounds decide
    assert "캐시 경로 시간의 60.0 % (98 % 구간 60.0–60.0 %)가 걸렸다: 적어도 60 %는" in text


def test_report_says_the_timing_was_noisy():
    text = report_of(
        time_json(timed(FakeMachine(busy=range(2, 6), slowdown=10.0, busy_method=True)))
    )
    assert "흔들림 (noisy)" in text and "9회" in text


def test_report_never_presents_an_untrusted_speedup_as_fact():
    result = time_json(timed(FakeMachine(busy=range(0, 100), slowdown=10.0, busy_method=True)))
    text = report_of(result)
    assert "이 시간은 믿으면 안 된다" in text and "측정의 문제다" in text
    assert FASTER not in text and "토큰 비율(" not in text and "최소 폭 모델(층과" not in text


def test_k_sides_turn_their_order_pair_by_round_and_add_rounds_only_while_undecided():
    now, calls, base = [0.0], [], {"a": 1.0, "b": 2.0, "c": 1.0}

    def run(name):  # the machine slows round by round, every side alike; c swings 1.3 / 0.8
        swing = (1.3 if calls.count(name) % 2 else 0.8) if name == "c" else 1.0
        now[0] += base[name] * (1 + calls.count(name)) * swing
        calls.append(name)

    def timed(pairs, max_runs=12):
        calls.clear()
        work, fake = {n: partial(run, n) for n in base}, {"clock": lambda: now[0]}
        rounds = Rounds(warmup=0, runs=3, max_runs=max_runs)
        return time_sides(work=work, pairs=pairs, device="cpu", rounds=rounds, warmup=1, **fake)

    steady = timed([("a", "b")])  # decided before the bound; c in no pair: the rounds asked for
    assert calls[:3] == ["a", "b", "c"] and calls.count("c") == 4 < calls.count("b") < 13
    assert steady.orders[:4] == [("a", "b", "c"), ("c", "b", "a"), ("b", "c", "a"), ("a", "b")]
    assert steady.runs_of("b") == pytest.approx([2 * a for a in steady.runs_of("a")])
    both = timed([("a", "b"), ("a", "c")])  # c undecided: up to max_runs; b stops when decided
    assert len(both.runs_of("c")) == 12 and len(both.runs_of("b")) == len(steady.orders)
    assert len(timed([("a", "c")], max_runs=2).orders) == 3  # never fewer than runs


def test_the_speedup_s_own_interval_divides_the_medians_interval_ends_across():
    """decide.speedup_medians: of the ratio of the medians, so its median is ``speedup``, its
    ends without's interval ends over with's, crosswise, and it misses at most as often as the
    two medians' intervals together."""
    result = timed(FakeMachine(busy=range(2, 6), slowdown=10.0, busy_method=True))
    found = speedup_medians(result)
    with_cache, without_cache = result.with_cache_interval, result.without_cache_interval
    assert with_cache.low < with_cache.high  # the burst widens the cached runs' interval
    assert found.median == result.speedup
    assert found.low == without_cache.low / with_cache.high
    assert found.high == without_cache.high / with_cache.low
    misses = (1 - with_cache.coverage) + (1 - without_cache.coverage)
    assert found.coverage == pytest.approx(1 - misses)
    assert result.speedup_interval != found  # the per-round ratios' interval is another one


# --- the narrow side: the minimal-width generate in the same rounds -------------------------------


def test_the_time_job_times_one_narrow_run_per_timed_round_its_warm_ups_apart(
    monkeypatch, tiny_model, tiny_run
):
    """The time job itself on a clock that moves one tick a read: every streamed run (cached,
    uncached, narrow) takes N + 3 ticks, so the speedup is 1, decided "same" after 7 rounds (4
    extra); one narrow run after each of the 7, its 2 warm-ups kept apart, and each round's
    share its narrow run over that round's cached run."""
    monkeypatch.delenv(JITTER_VARIABLE, raising=False)
    ticks = itertools.count()
    monkeypatch.setattr(clock_module.time, "perf_counter", lambda: float(next(ticks)))
    timing, _ = time_with_latency(
        model=tiny_model,
        prompt_ids=prompt_of(8),
        new_tokens=3,
        rounds=Rounds(warmup=2, runs=3, max_runs=9),
        speed_tokens=[2],
        cost_rounds=1,
        device="cpu",
        run=tiny_run,
    )
    assert timing.runs_done == 7 and timing.extra_rounds == 4
    assert len(timing.narrow_runs_s) == len(timing.with_cache_runs_s) == 7
    assert len(timing.narrow_warmup_s) == len(timing.with_cache_warmup_s) == 2
    # N + 3 ticks after its start: the prompt's put, N tokens' puts, end() and the end's read
    assert timing.narrow_runs_s == [3 + 3] * 7
    assert timing.fixed_share_runs == [
        narrow / cached for narrow, cached in zip(timing.narrow_runs_s, timing.with_cache_runs_s)
    ]
    assert timing.narrow_s == 6 and timing.fixed_share_interval == fixed_share(timing)
    heads = tiny_model.config.num_attention_heads
    assert timing.narrow_shape == {
        "hidden_size": 2 * heads,
        "intermediate_size": 2,
        "vocab_size": 2,
        "num_hidden_layers": tiny_model.config.num_hidden_layers,
        "num_attention_heads": heads,
        "num_key_value_heads": tiny_model.config.num_key_value_heads,
    }
    assert from_json(Timing, to_json(timing)) == timing


def test_a_narrow_run_leaves_the_jitter_s_sequence_where_the_timing_left_it(
    monkeypatch, tiny_model
):
    """Under the tests' jitter a narrow run's reads keep the factor of the gap it runs in: the
    A/B's own reads step the sequence as they did without the narrow side."""
    monkeypatch.setenv(JITTER_VARIABLE, "7")
    monkeypatch.setattr(clock_module, "_JITTERS", {})
    narrow = NarrowSide(
        model=tiny_model,
        prompt_len=8,
        new_tokens=3,
        device="cpu",
        clock=stamp_clock("cpu"),
        stamping=True,
    )
    device_clock("cpu")()  # the timing's last read of a round
    before = process_jitter(7).exponent
    narrow.after_round()
    assert process_jitter(7).exponent == before and narrow.runs_s[0] > 0


class NoisyClock(FakeClock):
    """The fake machine's clock with seeded noise: each run (cached, uncached, narrow) takes its
    true seconds times a factor from 0.8 to 1.25, drawn from ``seed``."""

    def __init__(self, narrow_share: float, seed: int):
        super().__init__(FakeMachine())
        self.narrow_share = narrow_share
        self.noise = random.Random(seed)

    def factor(self) -> float:
        return self.noise.uniform(0.8, 1.25)

    def work(self, use_cache: bool) -> None:
        self.now += TRUE_SECONDS[use_cache] * self.factor()

    def narrow(self) -> None:
        start = self.now
        self.now += self.narrow_share * TRUE_SECONDS[True] * self.factor()
        self.narrow_runs_s.append(self.now - start)


def noisy_timed(narrow_share: float, rounds: int, seed: int = 3) -> Timing:
    """time.json of ``rounds`` rounds exactly on a seeded noisy clock."""
    clock = NoisyClock(narrow_share, seed)
    measured = time_ab(
        work=clock.work,
        sides=CACHE_SIDES,
        device="cpu",
        rounds=Rounds(warmup=0, runs=rounds, max_runs=rounds),
        clock=clock,
        after_round=clock.narrow,
    )
    return timing_record(
        timed=measured,
        narrow_runs_s=clock.narrow_runs_s,
        narrow_warmup_s=[],
        narrow_shape=reportdata.NARROW_SHAPE,
        prompt_len=201,
        new_tokens=64,
        run=from_json(RunInfo, reportdata.RUN),
    )


@pytest.mark.parametrize(
    ("narrow_share", "rounds", "decision"),
    [
        (0.3, 3, "undecided"),  # every round's share below 1, but 3 rounds cover 75 %: no level
        (0.3, 9, "at_least"),
        (3.0, 9, "above"),
    ],
)
def test_the_fixed_cost_is_decided_from_the_rounds_on_a_noisy_clock(narrow_share, rounds, decision):
    time = noisy_timed(narrow_share, rounds)
    assert len(time.fixed_share_runs) == rounds
    assert (max(time.fixed_share_runs) < 1) == (narrow_share < 1)
    assert fixed_cost(time) == decision
    assert time.fixed_share_interval == fixed_share(time)
    assert time.fixed_share_interval.decisive == (decision != "undecided")


@pytest.mark.parametrize(
    ("shares", "decision", "bound"),
    [
        ([0.40, 0.42, 0.41, 0.43, 0.39, 0.44, 0.40], "at_least", 0.39),
        ([0.97, 1.00, 1.02, 0.99, 1.03, 0.98, 1.01], "almost_all", 0.97),  # its low end past 90 %
        ([0.89, 1.00, 1.02, 0.99, 1.03, 0.98, 1.01], "at_least", 0.89),  # 89-103 %
        ([1.30, 1.32, 1.28, 1.35, 1.31, 1.29, 1.33], "above", 1.0),  # no lower bound here
        ([0.40, 0.42, 0.41, 0.43, 0.39, 0.44, 1.20], "at_least", 0.3),  # one round past 1
        ([0.31, 0.47, 1.13, 0.40, 0.55, 0.90, 0.45], "at_least", 0.3),  # 31-113 %: 30 % printed
    ],
)
def test_the_fixed_cost_reads_the_share_s_interval_against_1(shares, decision, bound):
    """Seven rounds reach the per-look 97.5 % only with [min, max] (98.4 %): the share is a lower
    bound, so only that interval's low end is read; an interval holding 1 is not "(almost) all"
    unless its low end is, and the bound printed is never above the low end as printed."""
    with_runs = reportdata.time_json()["with_cache_runs_s"]
    time = reportdata.time_record(
        narrow_runs_s=[run * share for run, share in zip(with_runs, shares)]
    )
    assert time.fixed_share_runs == pytest.approx(shares)
    assert fixed_cost(time) == decision
    assert fixed_share_bound(time) == pytest.approx(bound)
    assert fixed_share_bound(time) <= min(shares)
