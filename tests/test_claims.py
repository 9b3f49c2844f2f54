"""Every sentence a checked claim: the framework (mminfer.report.decided) and the property tests.

The property tests build records of every shape a run can give, through the project's own
constructors (tests/reportdata.py's records, the summaries derived by the measuring code itself),
render both reports, and hold every claim they wrote to its oracle (tests/oracles.py). A planted
wrong branch shows that they catch what the golden cases miss.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from oracles import ORACLES, denied
from reportdata import every_record, serve_record

from mminfer.measures.serve import measure as serve_measure
from mminfer.report.decided import Decision, DecisionLog
from mminfer.report.render import decide_modules, render_reports

ROOT = Path(__file__).resolve().parents[1]
PROPERTY = settings(max_examples=150, deadline=None, derandomize=True)
PROPERTY = settings(PROPERTY, suppress_health_check=[HealthCheck.too_slow])

FIND = settings(PROPERTY, phases=[Phase.generate])  # a planted error: found, not shrunk


# --- the framework -------------------------------------------------------------------------------


def test_the_log_tells_written_decisions_from_those_without_words():
    log = DecisionLog()
    assert log.add(Decision("serve.one", "yes", {"batch": 2})) == "yes"
    assert log.add(Decision("serve.two", None)) is None
    assert log.add(Decision("serve.three", False)) is False
    assert [d.key for d in log.written] == ["serve.one"]
    assert [d.key for d in log.unwritten] == ["serve.two", "serve.three"]
    assert log.written[0].cited == {"variant": "yes", "batch": 2}
    assert log.summary() == "decisions: 1 written, 2 without words (serve.three, serve.two)"


def test_a_decision_key_names_its_measurement():
    with pytest.raises(ValueError, match="measurement"):
        Decision(key="every_doubling_grew", value=True)


def test_the_template_s_decide_logs_each_call_under_its_function_s_key():
    from mminfer.measures.time import decide as time_decide
    from mminfer.report.decided import Decided

    log = DecisionLog()
    decided = Decided({"time": (time_decide,)}, log)
    time = every_record()["time"]
    assert decided.time.cache_faster(time) == time_decide.cache_faster(time)
    assert [d.key for d in log.asked] == ["time.cache_faster"]
    with pytest.raises(AttributeError, match="decide.kvbytes: no measures folder"):
        decided.__getattr__("kvbytes")


def test_the_report_counts_each_claim_once_though_sections_render_twice_for_their_glance_rows():
    log = DecisionLog()
    render_reports(every_record(), decisions=log)  # serve's section is beyond.md's
    keys = [c.key for c in log.asked]
    assert keys.count("serve.growth_of") == 1


def test_every_oracle_names_a_decide_function_and_no_template_says_by_key():
    # issue 66: a template words a decision's value, asked of decide.py; no say(), no said()
    for folder in ("mminfer", "report"):
        for path in (ROOT / folder).rglob("*.md.j2"):
            assert not re.search(r"\bsaid?\(", path.read_text(encoding="utf-8")), path
    assert {"run.course_folder", "serve.cliff_cache"} <= set(ORACLES)
    decided = {
        f"{folder}.{name}"
        for folder, modules in decide_modules().items()
        for module in modules
        for name in dir(module)
    }
    assert sorted(set(ORACLES) - decided) == []


# --- records of every shape a run can give -------------------------------------------------------


@st.composite
def decode_steps(draw) -> dict[int, float]:
    """Decode steps of batches 1, 2, 4, ...: rising, falling, flat, with dips and cliffs."""
    count = draw(st.integers(min_value=1, max_value=7))
    step = draw(st.floats(min_value=1e-3, max_value=5e-2))
    steps = {}
    for index in range(count):
        steps[2**index] = step
        step *= draw(st.sampled_from([0.7, 0.95, 1.0, 1.02, 1.05, 1.2, 1.5, 1.9, 2.0, 2.5, 4.0]))
    return steps


def serve_record_of(steps: dict[int, float]):
    """serve.json with these decode steps, its summaries found by mminfer.measures.serve.measure's
    own code."""
    base = serve_record(steps=steps, peak_batch=min(steps), growth_stops_at=min(steps))
    rows = base.batches
    top = serve_measure.peak(rows)
    stops = serve_measure.growth_stops_at(rows, base.growth_per_doubling)
    return serve_record(
        steps=steps,
        peak_batch=top.batch,
        growth_stops_at=stops.batch,
        nearly_free_up_to=serve_measure.nearly_free_up_to(rows),
    )


def check_serve(steps: dict[int, float]) -> None:
    records = every_record(serve=serve_record_of(steps))
    log = DecisionLog()
    render_reports(records, decisions=log)  # report.md and beyond.md, each from its own records
    assert denied(records, log) == []


@PROPERTY
@given(decode_steps())
def test_serve_writes_only_claims_its_batches_support(steps):
    check_serve(steps)
