"""report.md reads whole, beyond.md section by section: measured on the golden cases' reports
(tests/reportcases.py).

report.md is at most 9,000 characters (code points of the whole file, folded blocks included).
In each report, outside ``<details>`` blocks (tables included, ``## 한눈에`` and beyond.md's
``## 용어`` excluded) the raw Markdown averages at most 1,000 characters per ``## `` section and
is at most 1,600 in any one; each section's first paragraph is at most 300 characters. ``## 한눈에``
holds one row per section present, in report order, each linking to its heading as GitHub
anchors it; the glossary defines each word once, and every word of GLOSSARY_WORDS the report
uses.
"""

from __future__ import annotations

import itertools
import re
import unicodedata

import pytest
from reportcases import both, cases, report, reports

from mminfer.measures.serve.serve import Serve
from mminfer.records import from_json, to_json

REPORT_LIMIT = 9000
AVERAGE_LIMIT = 1000
SECTION_LIMIT = 1600
FIRST_PARAGRAPH_LIMIT = 300
GLANCE = "한눈에"
FRAME = (GLANCE, "용어")  # no section of a measurement: beyond.md's glossary has its own heading
# every case's reports, each by (case, file): rendered once per test session (reportcases.reports)
REPORTS = [(name, file) for name in sorted(cases()) for file in reports(name)]
# the glossary's words that mean nothing else in the reports: one used must be defined there
GLOSSARY_WORDS = ("프리필", "토큰 비율", "speedup", "변동계수", "시드", "디스패치", "TTFT", "TPOT")


def rendered(name: str, file: str = "report.md") -> str:
    """One of the golden case's reports, rendered once per test session (reportcases.reports:
    the shape tests and the golden test read them)."""
    return reports(name)[file]


@pytest.mark.parametrize(("name", "file"), REPORTS)
def test_every_heading_stands_after_a_blank_line(name, file):
    # a heading right under </details> is read as part of the HTML block: no heading at all
    lines = rendered(name, file).split("\n")
    glued = [line for before, line in itertools.pairwise(lines) if line.startswith("#") and before]
    assert glued == []


@pytest.mark.parametrize("name", sorted(cases()))
def test_report_md_reads_whole(name):
    assert len(report(name)) <= REPORT_LIMIT


def sections(report: str) -> dict[str, str]:
    """Each ``## `` section's text (its heading line excluded), by heading."""
    found = {}
    for block in re.split(r"^## ", report, flags=re.M)[1:]:
        heading, _, body = block.partition("\n")
        found[heading.strip()] = body
    return found


def visible(body: str) -> str:
    """The Markdown outside <details> blocks, blank lines dropped."""
    outside = re.sub(r"<details>.*?</details>", "", body, flags=re.S)
    return "\n".join(line for line in outside.splitlines() if line.strip())


def github_anchor(heading: str) -> str:
    """GitHub's heading fragment, written here apart from mminfer.report.render.anchor: lower case,
    every character but letters, marks, numbers, connector punctuation, spaces and hyphens
    dropped, spaces turned into hyphens."""
    kept = []
    for char in heading.strip().lower():
        category = unicodedata.category(char)
        if char in " -" or category[0] in "LMN" or category == "Pc":
            kept.append(char)
    return "".join(kept).replace(" ", "-")


def test_github_anchor_of_the_tasks_headings():
    assert github_anchor("KV 캐시") == "kv-캐시"
    assert github_anchor("top-p") == "top-p"
    assert github_anchor("길이에 따른 비용") == "길이에-따른-비용"


@pytest.mark.parametrize(("name", "file"), REPORTS)
def test_sections_fit_the_size_limits(name, file):
    measured = {
        heading: len(visible(body))
        for heading, body in sections(rendered(name, file)).items()
        if heading not in FRAME
    }
    assert max(measured.values()) <= SECTION_LIMIT, measured
    assert sum(measured.values()) / len(measured) <= AVERAGE_LIMIT, measured


@pytest.mark.parametrize(("name", "file"), REPORTS)
def test_each_sections_first_paragraph_is_short(name, file):
    for heading, body in sections(rendered(name, file)).items():
        if heading in FRAME:
            continue
        paragraphs = [part.strip() for part in body.split("\n\n") if part.strip()]
        assert len(paragraphs[0]) <= FIRST_PARAGRAPH_LIMIT, (heading, paragraphs[0])


def glance_rows(report: str) -> list[tuple[str, str]]:
    """``## 한눈에``'s rows: each link's text and fragment."""
    table = sections(report)[GLANCE]
    return re.findall(r"^\| \[([^\]]+)\]\(#([^)]+)\)", table, flags=re.M)


@pytest.mark.parametrize(("name", "file"), REPORTS)
def test_the_glance_holds_a_row_per_section_present_linking_to_it(name, file):
    report = rendered(name, file)
    headings = [heading for heading in sections(report) if heading not in FRAME]
    rows = glance_rows(report)
    assert [text for text, _ in rows] == headings
    anchors = {github_anchor(heading) for heading in headings}
    assert all(fragment in anchors for _, fragment in rows), rows
    assert report.index("## " + GLANCE) < report.index("## " + headings[0])


def test_an_absent_measurement_has_no_row():
    report = rendered("plain")
    texts = [text for text, _ in glance_rows(report)]
    assert texts == ["실행 정보", "KV 캐시", "온도", "top-p"]


def test_the_glance_puts_the_tasks_three_numbers_side_by_side_first():
    row = sections(rendered("full"))[GLANCE].strip().splitlines()[3]  # after the run's row
    assert row.startswith("| [KV 캐시](#kv-캐시) |")
    assert "56.4배" in row and "speedup 5.00배" in row and "measured_bytes 102400" in row
    assert "믿을 만함 (ok)" in row


@pytest.mark.parametrize(("name", "file"), REPORTS)
def test_the_glossary_defines_each_word_once_and_each_it_uses(name, file):
    report = rendered(name, file)
    summary = r"<summary>(?:입력, 모델 구성, 용어|이 보고서의 낱말)</summary>(.*?)</details>"
    details = re.search(summary, report, re.S)
    words = re.findall(r"^- \*\*([^*(]+)", details.group(1), flags=re.M)
    assert words and len(words) == len(set(words)), words
    text = report.replace(details.group(0), "")
    assert [word for word in GLOSSARY_WORDS if word in text and word not in words] == []


def test_a_glance_rows_verdict_is_korean_with_the_records_word():
    report = rendered("rounding_noisy")
    assert "| 흔들림 (noisy) |" in sections(report)[GLANCE]
    report = rendered("differing_untrusted")
    assert "| 믿을 수 없음 (untrusted) |" in sections(report)[GLANCE]


# --- every sentence true to its record: each item of issue 30 beside its opposite -------------


def section(name: str, heading: str) -> str:
    return sections(both(name))[heading]


def test_a_dip_in_throughput_is_said_where_it_is():
    dip = "초당 토큰이 바로 앞 배치보다 줄어든 곳은 하나씩 따로 가를 때만 보인다(패스 5회로는"
    assert dip in section("serve_dips_at_2", "서빙")  # not among 6 steps: named with 9 (Holm)
    assert "바로 앞 배치보다" not in section("full", "서빙")


def test_the_turns_the_rounds_cannot_decide_are_named():
    # carry against recompute per turn, decided by its rounds (conversation.carry_faster)
    every_turn = section("turns_all_noisy", "대화")
    assert "턴 2, 3, 4에서는 라운드로 이어 쓰기가 다시 계산보다 빠른지 가를 수 없다" in every_turn
    one = section("turns_one_noisy", "대화")
    assert "턴 4에서는 라운드로" in one and "늘었는지는 구간이 겹쳐 가를 수 없다" in one
    assert "가를 수 없다" not in section("full", "대화")


def test_the_prefix_heading_stands_only_over_a_break():
    broke = section("prefix_broke", "대화")
    assert "### 공통 접두사가 끊긴 턴" in broke and "3번째 턴" in broke
    whole = section("full", "대화")
    assert "### 공통 접두사" not in whole and "공통 접두사가 끊긴 턴이 없다" in whole


def test_the_candidates_named_are_the_records_own():
    assert "「어제」 20%, 「오늘」 18%, 「아침에」 16%" in section("candidates_time_words", "top-p")
    mixed = section("candidates_mixed", "top-p")
    assert "「학교에」 20%, 「밥을」 18%, 「어제」 16%" in mixed and "오늘" not in mixed


def test_a_speedup_and_a_prefill_measured_twice_are_set_side_by_side():
    # the sweep's time ratio beside time.json's speedup: apart, with why; or overlapping
    apart = both("speedup_disagrees")
    assert "구간이 겹치지 않는다: 방법이 다르다(time.json은" in apart
    together = both("speedup_agrees")
    assert "구간이 겹친다(겹친다고 같은 것은 아니다)" in together
    assert "방법이 다르다(time.json은" not in together


def test_the_judge_of_the_same_says_which_of_three_it_found():
    from mminfer.records import agree

    assert agree((1.0, 2.0), (1.9, 3.0), 0.0) == "meet"  # the ranges overlap
    # single runs, 0.2 % apart: not the same range, but within the run's noise
    assert agree((0.36632, 0.36632), (0.36705, 0.36705), 0.1) == "within_noise"
    assert agree((0.04157, 0.04157), (0.01697, 0.01697), 0.1) == "apart"  # the TTFT


def test_each_users_speed_at_the_peak_goes_the_way_the_record_does():
    from reportdata import serve_record

    data = to_json(serve_record())
    last, first = data["batches"][-1], data["batches"][0]
    # every pass's step at the peak 1/1.2 of B = 1's: each user faster, 100 -> 120 tokens/s
    last["pass_step_s"] = [step / 1.2 for step in first["pass_step_s"]]
    last["per_user_tokens_per_second"] = 120.0
    report = render_every_with(serve=from_json(Serve, data))
    assert "100.0에서 120.0 토큰/초로 늘었다" in report
    assert "100.0에서 23.8 토큰/초로 줄었다" in render_every_with()


def render_every_with(**replace) -> str:
    from reportdata import render_every

    return render_every(**replace)


def test_the_kv_cache_section_of_the_course_report_reads_quickly():
    """## KV 캐시 of the course's report.md, folded blocks included: the task's three numbers and
    the one line on why the speedup is not the token ratio (issue 47), at most 2,500 characters."""
    assert len(sections(rendered("full"))["KV 캐시"]) <= 2500
