"""The checker (python -m mminfer.report.check): a folder's reports, figures and stored decisions
against what its files render; and the decisions each case words, held to the suite's oracles."""

import dataclasses
import functools
import re
import shutil

import pytest
import reportcases
from oracles import ORACLES, denied

from mminfer.measurements import measurement
from mminfer.records import write_record
from mminfer.report import check, render


@pytest.fixture
def results(tmp_path):
    """A results folder holding the full golden case's records, its report.md and beyond.md."""
    records = reportcases.cases()["full"]["records"]
    for name, record in records.items():
        write_record(tmp_path / measurement(name).filename, record)
    texts, _ = check.rendered(check.read_folder(tmp_path), str(tmp_path))
    for file, text in texts.items():
        (tmp_path / file).write_text(text, encoding="utf-8")
    return tmp_path


def test_a_folder_whose_comparisons_hold_passes(results, capsys):
    assert check.main([str(results)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"decisions: \d+ written, \d+ without words", out)
    assert "0 wrong" in out and "0 stored decisions part" in out


@pytest.mark.parametrize("file", ["report.md", "beyond.md"])
def test_a_report_these_files_do_not_render_fails(results, capsys, file):
    (results / file).write_text("# edited by hand\n", encoding="utf-8")
    assert check.main([str(results)]) == 1
    assert f"{file} is not what these files render" in capsys.readouterr().out


def test_one_word_of_report_md_edited_by_hand_is_named_by_its_line(results, capsys):
    lines = (results / "report.md").read_text(encoding="utf-8").splitlines(keepends=True)
    number = next(i for i, line in enumerate(lines) if "speedup" in line and "배" in line)
    lines[number] = lines[number].replace("배", "칸", 1)  # one word changed
    (results / "report.md").write_text("".join(lines), encoding="utf-8")
    assert check.main([str(results)]) == 1
    out = capsys.readouterr().out
    assert "report.md is not what these files render" in out
    assert f"  line {number + 1}: {lines[number].rstrip(chr(10))!r}" in out


def test_a_busy_line_the_contention_does_not_support_fails(results, monkeypatch, capsys):
    # time.json's stored flag says busy, its figures say quiet: the check recomputes from them
    records = reportcases.cases()["machine_busy"]["records"]
    time = records["time"]
    quiet = dataclasses.replace(time.contention, cpu_share=0.98, cpu_pressure=0.01)
    write_record(results / "time.json", dataclasses.replace(time, contention=quiet))
    texts, _ = check.rendered(check.read_folder(results), str(results))
    (results / "report.md").write_text(texts["report.md"], encoding="utf-8")
    (results / "beyond.md").write_text(texts["beyond.md"], encoding="utf-8")
    assert "**바쁜 기계**" in texts["report.md"]
    assert check.main([str(results)]) == 1  # the stored flag against its figures
    assert (
        "time.json contention.busy: True stored, False from its CPU share"
        in capsys.readouterr().out
    )


@pytest.mark.parametrize("case", sorted(reportcases.cases()))
def test_every_case_s_stored_decisions_are_what_their_functions_give_from_the_runs(case):
    assert check.stored_decisions(reportcases.cases()[case]["records"]) == []


def test_a_stored_decision_edited_by_hand_fails_the_folder_by_its_key(results, capsys):
    time = check.read_folder(results)["time"]
    edited = "undecided" if time.cache_faster != "undecided" else "yes"
    write_record(results / "time.json", dataclasses.replace(time, cache_faster=edited))
    assert check.main([str(results)]) == 1
    out = capsys.readouterr().out
    assert f"time.json cache_faster: {edited!r} stored, {time.cache_faster!r} from its runs" in out
    assert "1 stored decisions part from their runs" in out


def test_a_busy_flag_its_figures_do_not_give_fails_the_folder(results, capsys):
    time = check.read_folder(results)["time"]
    flipped = dataclasses.replace(time.contention, busy=not time.contention.busy)
    write_record(results / "time.json", dataclasses.replace(time, contention=flipped))
    assert check.main([str(results)]) == 1
    assert "time.json contention.busy" in capsys.readouterr().out


def test_a_folder_without_the_task_s_files_is_a_clear_error(tmp_path, capsys):
    assert check.main([str(tmp_path)]) == 2
    assert "config key outdir" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("share", "pressure", "busy"),
    [
        (0.98, 0.01, False),
        (0.76, 0.19, False),
        (0.74, 0.0, True),
        (0.9, 0.21, True),
        (None, 0.3, True),
        (None, None, False),
        (0.5, None, True),
    ],
)
def test_the_busy_line_is_written_exactly_where_the_contention_says_busy(share, pressure, busy):
    from mminfer.records.machine import is_busy

    records = dict(reportcases.cases()["full"]["records"])
    time = records["time"]
    contention = dataclasses.replace(
        time.contention, cpu_share=share, cpu_pressure=pressure, busy=is_busy(share, pressure)
    )
    records["time"] = dataclasses.replace(time, contention=contention)
    texts, log = check.rendered(records)
    for text in texts.values():
        top = text.split("\n## ", 1)[0]  # under the title
        assert len([line for line in top.splitlines() if line.startswith("**바쁜 기계**")]) == busy
        assert ("⚠ 바쁜 기계" in text.split("## 한눈에", 1)[1].split("\n## ", 1)[0]) == busy
    written = [claim.key for claim in log.written if claim.key == "busy.busy_of"]
    assert written == (["busy.busy_of", "busy.busy_of"] if busy else [])  # once in each report
    assert ORACLES["busy.busy_of"](records, {}) == busy  # the figures' busy records named


@pytest.mark.parametrize("name", ["sweep", "serve", "anatomy", "lookup"])
def test_the_busy_line_names_each_busy_timing_and_its_rule(name):
    from mminfer.records.machine import Contention

    records = dict(reportcases.cases()["full"]["records"])
    busy = Contention(cpu_share=0.4, cpu_pressure=0.5, wall_s=3.0, threads=2, busy=True)
    records[name] = dataclasses.replace(records[name], contention=busy)
    texts = check.rendered(records, "results")[0]
    # report.md reads none of them: only beyond.md says so, with the command for beyond.md alone
    assert "바쁜 기계" not in texts["report.md"]
    (line,) = [line for line in texts["beyond.md"].splitlines() if line.startswith("**바쁜 기계**")]
    assert f"{name}.json(CPU 몫 40%)을 잴 때 기계가 바빴다" in line
    assert line.endswith(f"`snakemake --cores 1 results/beyond.md -R {name}`.")
    assert len(line) <= 300


def test_the_busy_line_of_every_timing_at_once_fits_in_300_characters():
    from mminfer.records.machine import Contention

    records = dict(reportcases.cases()["full"]["records"])
    busy = Contention(cpu_share=0.4, cpu_pressure=0.5, wall_s=3.0, threads=2, busy=True)
    for name in ("time", "sweep", "anatomy", "lookup", "serve", "conversation"):
        records[name] = dataclasses.replace(records[name], contention=busy)
    for name in ("repetition", "batch"):
        timing = dataclasses.replace(records[name].timing, contention=busy)
        records[name] = dataclasses.replace(records[name], timing=timing)
    texts = check.rendered(records, "/root/mm/infer")[0]
    for file, text in texts.items():
        (line,) = [line for line in text.splitlines() if line.startswith("**바쁜 기계**")]
        assert len(line) <= 300, (file, len(line))
    assert "-R time`" in texts["report.md"] and "time sweep anatomy" in texts["beyond.md"]


def test_a_conversation_with_one_busy_turn_is_named_busy_by_figures_the_check_recomputes():
    # CI's quiet course run, 746e064: one short turn starved among quiet ones; the turns'
    # wall-weighted figures said quiet while the flag said busy, so the checker refused the line
    from mminfer.measures.conversation.conversation import taken_together
    from mminfer.records.machine import Contention, is_busy

    quiet = Contention(cpu_share=0.97, cpu_pressure=0.02, wall_s=9.0, threads=2, busy=False)
    starved = Contention(cpu_share=0.6, cpu_pressure=0.05, wall_s=1.0, threads=2, busy=True)
    together = taken_together([quiet, starved, None, quiet])
    assert together.busy and is_busy(together.cpu_share, together.cpu_pressure)
    assert together.wall_s == 19.0
    assert taken_together([quiet, quiet]).busy is False
    records = dict(reportcases.cases()["full"]["records"])
    records["conversation"] = dataclasses.replace(records["conversation"], contention=together)
    top = check.rendered(records)[0]["beyond.md"].split("\n## ", 1)[0]
    assert "conversation.json(CPU 몫 60%)을 잴 때 기계가 바빴다" in top
    assert ORACLES["busy.busy_of"](records, {})


@pytest.mark.parametrize(("case", "busy"), [("machine_busy", True), ("full", False)])
def test_the_kv_section_names_the_load_before_it_blames_python_or_the_fixed_cost(case, busy):
    # a busy run read against its JSON: time.json's rounds starved, so the fixed cost the narrow
    # side measures carries the wait for a CPU too, and the section says so first
    records = reportcases.cases()[case]["records"]
    report = check.rendered(records)[0]["report.md"]
    section = report.split("## KV 캐시", 1)[1].split("<details>", 1)[0]
    load = section.find("time.json을 잴 때 기계가 바빴고")
    assert (load >= 0) == busy
    blames = section.find("파이썬과 커널 호출")
    assert blames >= 0
    assert (0 <= load < blames) == busy


@pytest.mark.parametrize("case", sorted(reportcases.cases()))
def test_every_printed_figure_is_its_key_s_value_and_the_speedup_has_one_value(case):
    records = reportcases.cases()[case]["records"]
    figures: list[render.Figure] = []
    check.rendered(records, None, figures)
    assert check.wrong_figures(figures, records) == []
    speedups = [figure for figure in figures if figure.key == "time.speedup"]
    # the glance row, the section's sentence and the table of report.md (and beyond.md's sweep)
    assert len([figure for figure in speedups if figure.report == "report.md"]) == 3
    speedup = check.printed_as(records["time"].speedup, "sig")
    assert {figure.printed for figure in speedups} == {speedup}
    # the glance rows of ## 온도 and ## top-p print their counts under the keys their tables do
    for temperature in records["temp"]:
        key = f"temp[{temperature}].distinct"
        assert len([figure for figure in figures if figure.key == key]) == 2, key
    if case == "full":
        # a reader's division of the two printed medians gives the printed speedup
        printed = {figure.key: float(figure.printed.replace(",", "")) for figure in figures}
        ratio = printed["time.without_cache_s"] / printed["time.with_cache_s"]
        assert check.printed_as(ratio, "sig") == speedup


def test_a_second_speedup_printed_under_its_key_fails_the_folder(results, monkeypatch, capsys):
    # planted: the glance row prints the median of the rounds' ratios as time.json's speedup
    time = check.read_folder(results)["time"]
    paired = dataclasses.replace(time.speedup_interval, median=time.speedup * 0.97)
    write_record(results / "time.json", dataclasses.replace(time, speedup_interval=paired))
    planted = results.parent / "planted"
    shutil.copytree(render.TEMPLATE.parent, planted)
    same = (render.SECTIONS / "cache" / "same.md.j2").read_text(encoding="utf-8")
    glance = 'time.speedup|figure("time.speedup")'
    assert glance in same
    second = same.replace(glance, 'time.speedup_interval.median|figure("time.speedup")')
    (planted / "cache").mkdir()
    (planted / "cache" / "same.md.j2").write_text(second, encoding="utf-8")
    monkeypatch.setattr(
        check, "render_reports", functools.partial(render.render_reports, folder=planted)
    )
    assert check.main([str(results)]) == 1
    out = capsys.readouterr().out
    assert "WRONG FIGURE time.speedup in report.md" in out and "TWO VALUES time.speedup" in out


def test_a_figure_s_key_reads_fields_and_mapping_keys():
    records = reportcases.cases()["full"]["records"]
    assert check.value_of(records, "time.speedup") == records["time"].speedup
    assert check.value_of(records, "temp[0.3].distinct") == records["temp"]["0.3"].distinct
    sharp = records["topp_detail"].positions["sharp"].survivors["0.9"]
    assert check.value_of(records, "topp_detail.positions[sharp].survivors[0.9]") == sharp


def test_a_median_printed_at_its_interval_s_precision_is_a_wrong_figure():
    # 77d9d50's table: 239 ms between 190 and 290 printed as "200 ms"
    records = {
        "time": dataclasses.replace(
            reportcases.cases()["full"]["records"]["time"], with_cache_s=0.239
        )
    }
    rounded = render.Figure("report.md", "time.with_cache_s", "200", "sig", 1000.0)
    (line,) = check.wrong_figures([rounded], records)
    assert "printed 200, its value is 239" in line
    exact = render.Figure("report.md", "time.with_cache_s", "239", "sig", 1000.0)
    assert check.wrong_figures([exact], records) == []


def test_a_batch_past_the_fit_is_named_off_its_line_only_beyond_its_tolerance():
    records = dict(reportcases.cases()["course"]["records"])
    serve = records["serve"]  # the line holds within 25 % up to B = 32; 64 lies off it
    fit = dataclasses.replace(serve.fit, fitted_batches=[1, 16])
    records["serve"] = dataclasses.replace(serve, fit=fit)
    texts, log = check.rendered(records)
    assert "B = 64에서는 패스의 구간째로 이 직선에서 25% 넘게" in texts["beyond.md"]  # not 32
    assert "serve.off_the_line_named" in [decision.key for decision in log.written]
    assert denied(records, log) == []


@pytest.mark.parametrize("case", sorted(reportcases.cases()))
def test_every_decision_a_case_words_its_oracle_grants(case):
    records = reportcases.cases()[case]["records"]
    _, log = check.rendered(records)
    assert denied(records, log) == []


@pytest.mark.parametrize("busy", [("time", "sweep", "serve"), ("time",)])
def test_a_load_is_named_as_a_cause_only_where_one_side_alone_ran_busy(busy):
    # issue 58: read against its JSON, a busy run named the load as the cause of two timings'
    # difference where both had run under it; each comparison here parts ("apart")
    from mminfer.records.machine import Contention

    records = dict(reportcases.cases()["speedup_disagrees"]["records"])
    loaded = Contention(cpu_share=0.4, cpu_pressure=0.5, wall_s=3.0, threads=2, busy=True)
    for name in busy:
        records[name] = dataclasses.replace(records[name], contention=loaded)
    records["latency"] = dataclasses.replace(
        records["latency"], contention=records["time"].contention
    )
    texts, log = check.rendered(records)
    causes = [claim for claim in log.written if ".load_against_" in claim.key]
    if busy == ("time",):  # time.json alone: named beside the sweep, which ran quiet
        assert "time.json을 잴 때만 기계가 바빴고" in texts["beyond.md"]
        assert [claim.key for claim in causes] == [
            "sweep.load_against_time",
            "sweep.load_against_latency",
        ]
    else:  # every side busy: no load is a difference between them
        assert "때만 기계가 바빴고" not in texts["beyond.md"] and causes == []
    assert denied(records, log) == []
