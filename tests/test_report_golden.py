"""report.md renders the Markdown pinned in tests/data/report/: each case of tests/reportcases.py
against its golden file, with wrapped prose joined on both sides (mminfer.report.render.unwrap) and
blank
runs as one. A sentence changed on purpose changes its golden files (render them again with
``PYTHONPATH=.:tests python tests/reportcases.py`` and read the diff)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from reportcases import cases

from mminfer.report.render import render_report, unwrap

GOLDEN = Path(__file__).resolve().parent / "data" / "report"


def markdown(text: str) -> str:
    """The text as Markdown reads it: paragraphs on one line, one blank line between blocks.

    A table or a heading right under a paragraph's last line (the one template left no blank line
    at a few such places) is a table or a heading all the same (GitHub's Markdown): it gets its
    blank line.
    """
    text = re.sub(r"^([^|\n].*)\n\|", "\\1\n\n|", unwrap(text), flags=re.M)
    text = re.sub(r"^(.+)\n#", "\\1\n\n#", text, flags=re.M)
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


@pytest.mark.parametrize("name", sorted(cases()))
def test_the_report_renders_the_markdown_it_rendered_before(name):
    case = cases()[name]
    report = render_report(case["records"], case["pictures"], case["cache_script"])
    golden = (GOLDEN / f"{name}.md").read_text(encoding="utf-8")
    assert markdown(report) == markdown(golden)


def test_every_golden_file_is_a_case():
    assert sorted(path.stem for path in GOLDEN.glob("*.md")) == sorted(cases())
