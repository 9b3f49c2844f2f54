"""The benchmark's arithmetic (scripts/benchmark.py): the floors it prints, never its timings."""

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "benchmark.py"


# Not named `benchmark`: pytest-benchmark, where installed, owns a fixture of that name.
@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("mminfer_benchmark", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_floor_runs_timing_jobs_alone_and_packs_the_rest(bench):
    jobs = {"time": 3.0, "cache": 2.0, "kvbytes": 1.0, "temp": 1.0, "topp": 1.0}
    # start 1 + time alone 3 + the other four (5 s) packed on 2 cores
    # (2.5 s, longer than any one job)
    assert bench.schedule_floor(jobs, cores=2, start=1.0) == pytest.approx(6.5)
    # on 8 cores the longest shared job bounds the packing instead
    assert bench.schedule_floor(jobs, cores=8, start=1.0) == pytest.approx(6.0)


def test_the_jobs_that_run_alone_come_from_the_registry(bench):
    from mminfer.measurements import alone_rules

    assert alone_rules() == bench.ALONE_RULES  # no list of its own: a new timing rule joins
    assert {"time", "sweep", "serve", "conversation"} <= set(bench.ALONE_RULES)
    jobs = {"conversation": 2.0, "cache": 1.0}
    # the conversation runs alone (2 s), the cache job beside nothing else (1 s)
    assert bench.schedule_floor(jobs, cores=2, start=0.0) == pytest.approx(3.0)


def test_floor_puts_sweep_beside_time_and_the_report_last(bench):
    jobs = {"time": 3.0, "sweep": 4.0, "capacity": 1.0, "plot_temp": 1.0, "report": 0.5}
    assert bench.schedule_floor(jobs, cores=2, start=1.0) == pytest.approx(1.0 + 7.0 + 1.0 + 0.5)


def test_floor_with_only_imports_keeps_plots_and_report_as_measured(bench, capsys):
    jobs = {"time": 3.0, "cache": 2.0, "plot_temp": 2.5, "report": 0.2}
    floors = bench.floor_line("(a)", jobs, cores=2, start=1.0, torch_s=1.5, plain=4.0)
    assert floors["from_jobs_s"] == pytest.approx(1.0 + 3.0 + 2.5 + 0.2)
    # time and cache become 1.5 s each; the plot keeps its 2.5 s, the longest of the shared jobs
    assert floors["only_import_s"] == pytest.approx(1.0 + 1.5 + 2.5 + 0.2)
    assert "x (c)" in capsys.readouterr().out


def test_each_job_takes_its_median_over_the_rounds(bench):
    rounds = [
        {"time": 3.2, "cache": 9.0},
        {"time": 12.9, "cache": 2.1},
        {"time": 3.0, "cache": 2.0},
    ]
    assert bench.median_jobs(rounds) == {"time": 3.2, "cache": 2.1}  # not the last round's
