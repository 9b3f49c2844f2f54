"""Rates are computed in one module (mminfer.records.rates) under one name (STYLE.md): each
function is the plain division, in the order the records always used; every rate field of the
records comes out of the module (the module spied to return markers, each record built by its
measurement's own code); and no template computes a rate (its Jinja syntax tree is parsed)."""

from __future__ import annotations

import math
from pathlib import Path

import jinja2
import jinja2.nodes
import pytest
from reportdata import anatomy_record, replayed, time_record

from mminfer.records import rates
from mminfer.timing.ab import Rounds

RATE = 4242.5  # what the spied per_s returns: no real figure of the records equals it
SECONDS = 0.012345  # what the spied seconds_for returns
GIGA = 777.25  # what the spied gflop_per_s and gb_per_s return


@pytest.fixture
def spied(monkeypatch):
    """The module's functions replaced by markers (every named rate goes through per_s)."""
    monkeypatch.setattr(rates, "per_s", lambda count, seconds: RATE)
    monkeypatch.setattr(rates, "seconds_for", lambda count, rate: SECONDS)
    monkeypatch.setattr(rates, "gflop_per_s", lambda flops_a_second: GIGA)
    monkeypatch.setattr(rates, "gb_per_s", lambda bytes_a_second: GIGA)


# --- the module ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "function",
    [rates.per_s, rates.tokens_per_s, rates.flops_per_s, rates.bytes_per_s, rates.ops_per_s],
)
def test_a_rate_is_the_count_over_the_seconds_bit_for_bit(function):
    for count, seconds in [(64, 0.0371), (1, 0.0123456789), (3 * 10**11, 1.7), (1.0, 3e-7)]:
        assert function(count, seconds) == count / seconds


def test_one_a_second_is_one_over_the_seconds_and_seconds_for_the_inverse():
    for seconds in [0.1, 0.0371, 3e-7, 12.5]:
        assert rates.tokens_per_s(1, seconds) == 1 / seconds
        assert rates.tokens_per_s(1.0, seconds) == 1.0 / seconds
    assert rates.per_s(5, 0) == rates.tokens_per_s(1, 0.0) == math.inf  # unbounded
    # and seconds for a count, the count over the rate
    assert rates.seconds_for(2000, 2.5e5) == 2000 / 2.5e5
    assert rates.seconds_for(1, 2.5e5) == 1 / 2.5e5
    assert rates.seconds_for(1, 0) == math.inf
    assert rates.gflop_per_s(3e11) == 3e11 / 1e9 == 300.0  # the report's units: a billion a second
    assert rates.gb_per_s(1.223e10) == 1.223e10 / 1e9


@pytest.mark.parametrize("function", [rates.per_s, rates.seconds_for])
@pytest.mark.parametrize("bad", [-0.5, None])
def test_a_negative_or_missing_divisor_is_an_error_not_a_figure(function, bad):
    with pytest.raises(ValueError):
        function(5, bad)


# --- the records' rate fields come from it -------------------------------------------------------


def test_time_latency_speeds_come_from_the_module(spied):
    from mminfer.measures.time.measure import path_latency

    stamps = [0.0, 0.01, 0.02, 0.03, 0.04, 0.05]
    path = path_latency(
        stamped=[(stamps, 0.06)] * 3,
        seconds=[0.05] * 3,
        prompt_len=4,
        use_cache=True,
        speed_tokens=[2, 4],
        level=0.9,
    )
    assert path.decode_tokens_per_s == RATE
    for speed in path.speed:
        assert speed.tokens_per_s == RATE
        assert speed.runs_tokens_per_s == [RATE] * 3


def test_serve_speeds_and_step_target_come_from_the_module(spied):
    from mminfer.measures.serve.measure import batch_step, fit_batches, users_bound

    rows = []
    for batch, step_s in [(1, 0.010), (2, 0.011), (4, 0.013)]:
        row = batch_step(batch, [[step_s] * 4] * 2, None, 1, 1, None, rows[-1] if rows else None)
        assert row.tokens_per_second == row.per_user_tokens_per_second == RATE
        rows.append(row)
    users = users_bound(rows, fit_batches(rows), 25.0, 64, 1024, None, "unknown")
    assert users.step_target_s == SECONDS


def test_batch_tokens_per_s_come_from_the_module(spied, monkeypatch):
    import mminfer.measures.batch.measure as measure

    timed = replayed([0.2, 0.21, 0.19], [0.5, 0.52, 0.49], measure.BATCH_SIDES)
    monkeypatch.setattr(measure, "time_ab", lambda **kwargs: timed)
    timing = measure.time_batch(
        model=None,
        prompts=[[1, 2, 3], [4, 5]],
        pad=0,
        new_tokens=8,
        rounds=Rounds(warmup=0, runs=3, max_runs=9),
        device="cpu",
    )
    assert timing.batch_tokens_per_s == timing.sequential_tokens_per_s == RATE


def test_a_machine_probes_rate_comes_from_the_module(spied):
    from mminfer.timing.machine import probe

    ticks = iter([0.0, 0.1, 0.1, 0.25, 0.25, 0.3])
    speed = probe(run=lambda: None, work=1000, device="cpu", runs=3, clock=lambda: next(ticks))
    assert speed.per_s == RATE


def test_anatomys_achieved_rates_and_printed_units_come_from_the_module(spied):
    from mminfer.records.interval import median_interval
    from mminfer.report.sections.anatomy.anatomy import anatomy_facts

    anatomy = anatomy_record()
    split = anatomy.split("with_cache", median_interval([0.05] * 3))
    assert split.achieved_flops_per_s == split.achieved_bytes_per_s == RATE
    assert split.seconds == {"dispatch": SECONDS, "arithmetic": SECONDS, "memory": SECONDS}
    assert split.achieved_gflop_per_s == split.achieved_gb_per_s == GIGA
    facts = anatomy_facts(anatomy)
    assert facts["op_s"] == SECONDS
    assert facts["matmul_gflop_per_s"] == GIGA
    assert facts["bandwidth_gb_per_s"] == [GIGA] * len(anatomy.machine.bandwidth)


def test_the_anatomy_sections_op_cost_comes_from_the_module(spied):
    """The facts the anatomy's section is rendered with (joined with time.json): the op cost it
    prints and each path's dispatch seconds against time.json's runs."""
    from mminfer.report.sections.anatomy.anatomy import anatomy_time_facts

    facts = anatomy_time_facts(anatomy_record(), time_record())
    assert facts["comparable"] == "yes"
    assert facts["op_s"] == SECONDS
    assert [split.seconds["dispatch"] for split in facts["split"].values()] == [SECONDS] * 2


# --- the templates print rates, never compute them ----------------------------------------------

ROOT = Path(__file__).parents[1]
TEMPLATES = sorted(
    [*ROOT.joinpath("mminfer").rglob("*.j2"), *ROOT.joinpath("report").rglob("*.j2")]
)


def names_in(node) -> list[str]:
    """Every variable and attribute name under a Jinja node."""
    found = []
    for sub in node.find_all((jinja2.nodes.Name, jinja2.nodes.Getattr)):
        found.append(sub.name if isinstance(sub, jinja2.nodes.Name) else sub.attr)
    if isinstance(node, (jinja2.nodes.Name, jinja2.nodes.Getattr)):
        found.append(node.name if isinstance(node, jinja2.nodes.Name) else node.attr)
    return found


def rate_arithmetic(source: str) -> list[str]:
    """The template's divisions and multiplications that touch a rate or scale by a power of ten
    (``x / 1e9``, ``1 / rate``): each a rate computed where the facts should hand it over."""
    tree = jinja2.Environment().parse(source)
    found = []
    for op in tree.find_all((jinja2.nodes.Div, jinja2.nodes.Mul, jinja2.nodes.FloorDiv)):
        operands = [op.left, op.right]
        rate = any("per_s" in name for side in operands for name in names_in(side))
        scale = any(
            isinstance(side, jinja2.nodes.Const)
            and isinstance(side.value, (int, float))
            and side.value in (1, 1e3, 1e6, 1e9)
            for side in operands
        )
        if rate or scale:
            found.append(f"line {op.lineno}")
    return found


def test_the_templates_are_found():
    names = {path.name for path in TEMPLATES}
    assert {"anatomy.md.j2", "serve.md.j2", "report.md.j2", "run.md.j2"} <= names


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda path: path.name)
def test_no_template_computes_a_rate(template):
    assert rate_arithmetic(template.read_text(encoding="utf-8")) == []


def test_the_template_check_catches_a_rate_divided_in_place():
    assert rate_arithmetic("{{ (probe.speed.per_s / 1e9)|round }}") == ["line 1"]
    assert rate_arithmetic("{{ (1 / a.machine.op.per_s) }}") == ["line 1"]
    assert rate_arithmetic("{{ (x.achieved_flops_per_s / x.machine_flops_per_s) }}") == ["line 1"]
    assert rate_arithmetic("{{ (x.tokens / x.seconds) * 1e9 }}") == ["line 1"]
    assert rate_arithmetic("{{ a.matmul_gflop_per_s }} {{ rows * 2 }}") == []
