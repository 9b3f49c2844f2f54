"""report.md renders the Markdown pinned in tests/data/report/: each case of tests/reportcases.py
against its golden file, with wrapped prose joined on both sides (mminfer.report.render.unwrap) and
blank runs as one.

One case is pinned whole (reportcases.WHOLE: ``full``, the demo model with every measurement: its
report.md in full.md, its beyond.md in full_beyond.md). Every other case's golden file holds only
the sections that case exercises, of report.md then beyond.md (``course``, the course model's: the
glances, the run and the serving sections), verbatim and in report order: a section runs from a line
starting with ``## `` to the next (``## 한눈에`` is one like any other, beyond.md's keyed
reportcases.BEYOND_GLANCE; a title's part, from its ``# `` line, is keyed by that line). The file's
own headings say which sections it pins; each must be in the case's rendering, in that order, and
read the same. They were chosen once as the sections whose text differs from the full case's
(reportcases.exercised; serve_steps_in_one_band, which differs in none, pins ``## 서빙``, the
section its name is about); a new case without a golden file gets those.

A sentence changed on purpose changes the golden files that pin its section: render them again with
``PYTHONPATH=.:tests python tests/reportcases.py`` (the whole case whole, every other case only the
sections its file already pins; a file is rewritten only where its text changed) and read the diff.
To pin another section of a case, add that section's heading and text to its file (or delete the
file to have it written again from reportcases.exercised) and render again."""

from __future__ import annotations

import re

import pytest
from reportcases import BEYOND_GLANCE, GOLDEN, WHOLE, both, cases, reports, sections_of

from mminfer.report.render import unwrap


def markdown(text: str) -> str:
    """The text as Markdown reads it: paragraphs on one line, one blank line between blocks.

    A table or a heading right under a paragraph's last line (the one template left no blank line
    at a few such places) is a table or a heading all the same (GitHub's Markdown): it gets its
    blank line.
    """
    text = re.sub(r"^([^|\n].*)\n\|", "\\1\n\n|", unwrap(text), flags=re.M)
    text = re.sub(r"^(.+)\n#", "\\1\n\n#", text, flags=re.M)
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


def golden(name: str) -> str:
    return (GOLDEN / f"{name}.md").read_text(encoding="utf-8")


def test_the_whole_cases_are_cases():
    assert set(WHOLE) <= set(cases())


@pytest.mark.parametrize("name", sorted(WHOLE))
def test_the_reports_render_the_markdown_they_rendered_before(name):
    assert markdown(reports(name)["report.md"]) == markdown(golden(name))
    assert markdown(reports(name)["beyond.md"]) == markdown(golden(f"{name}_beyond"))


@pytest.mark.parametrize("name", sorted(set(cases()) - set(WHOLE)))
def test_each_pinned_section_renders_the_markdown_it_rendered_before(name):
    pinned = sections_of(golden(name))
    rendered = sections_of(both(name))
    assert pinned, f"{name}.md pins no section"
    assert [heading for heading in pinned if heading not in rendered] == []
    assert list(pinned) == [heading for heading in rendered if heading in pinned]  # report order
    for heading, text in pinned.items():
        assert markdown(rendered[heading]) == markdown(text), heading


def test_a_section_is_its_heading_to_the_next():
    glance = "## 한눈에\n\n| [실행 정보](#실행-정보) |\n\n"
    text = f"# title\n\nintro\n\n{glance}## 서빙\n\n### sub\n\nbody\n# b\n\n## 한눈에\n\n| a |\n"
    found = sections_of(text)
    assert list(found) == ["# title", "## 한눈에", "## 서빙", "# b", BEYOND_GLANCE]
    assert found["## 서빙"] == "## 서빙\n\n### sub\n\nbody\n"
    assert "".join(found.values()) == text
    assert list(sections_of("intro\n## 서빙\n\nbody\n")) == ["", "## 서빙"]


def test_every_golden_file_is_a_case():
    files = [*cases(), *(f"{name}_beyond" for name in WHOLE)]
    assert sorted(path.stem for path in GOLDEN.glob("*.md")) == sorted(files)
