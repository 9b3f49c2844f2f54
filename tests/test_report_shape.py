"""report.md reads in five minutes: measured on the golden reports (tests/reportcases.py).

Outside ``<details>`` blocks (tables included, ``## 한눈에`` excluded) the raw Markdown averages at
most 1,000 characters per ``## `` section and is at most 1,600 in any one; each section's first
paragraph is at most 300 characters. ``## 한눈에`` holds one row per section present, in report
order, each linking to its heading as GitHub anchors it; the glossary defines each word once.
"""

from __future__ import annotations

import re
import unicodedata

import pytest
from reportcases import cases

from mminfer.report import render_report

AVERAGE_LIMIT = 1000
SECTION_LIMIT = 1600
FIRST_PARAGRAPH_LIMIT = 300
GLANCE = "한눈에"


def rendered(name: str) -> str:
    case = cases()[name]
    return render_report(case["records"], case["pictures"], case["cache_script"])


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
    """GitHub's heading fragment, written here apart from mminfer.report.anchor: lower case,
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


@pytest.mark.parametrize("name", sorted(cases()))
def test_sections_fit_the_size_limits(name):
    measured = {
        heading: len(visible(body))
        for heading, body in sections(rendered(name)).items()
        if heading != GLANCE
    }
    assert max(measured.values()) <= SECTION_LIMIT, measured
    assert sum(measured.values()) / len(measured) <= AVERAGE_LIMIT, measured


@pytest.mark.parametrize("name", sorted(cases()))
def test_each_sections_first_paragraph_is_short(name):
    for heading, body in sections(rendered(name)).items():
        if heading == GLANCE:
            continue
        paragraphs = [part.strip() for part in body.split("\n\n") if part.strip()]
        assert len(paragraphs[0]) <= FIRST_PARAGRAPH_LIMIT, (heading, paragraphs[0])


def glance_rows(report: str) -> list[tuple[str, str]]:
    """``## 한눈에``'s rows: each link's text and fragment."""
    table = sections(report)[GLANCE]
    return re.findall(r"^\| \[([^\]]+)\]\(#([^)]+)\)", table, flags=re.M)


@pytest.mark.parametrize("name", sorted(cases()))
def test_the_glance_holds_a_row_per_section_present_linking_to_it(name):
    report = rendered(name)
    headings = [heading for heading in sections(report) if heading != GLANCE]
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
    assert "56.4배" in row and "speedup 5.00배" in row and "measured_bytes 102,400" in row
    assert "믿을 만함 (ok)" in row


@pytest.mark.parametrize("name", sorted(cases()))
def test_the_glossary_defines_each_word_once(name):
    report = rendered(name)
    details = re.search(r"<summary>입력, 모델 구성, 용어</summary>(.*?)</details>", report, re.S)
    words = re.findall(r"^- \*\*([^*]+)\*\*", details.group(1), flags=re.M)
    assert words and len(words) == len(set(words)), words


def test_a_glance_rows_verdict_is_korean_with_the_records_word():
    report = rendered("rounding_noisy")
    assert "| 흔들림 (noisy) |" in sections(report)[GLANCE]
    report = rendered("differing_untrusted")
    assert "| 믿을 수 없음 (untrusted) |" in sections(report)[GLANCE]
