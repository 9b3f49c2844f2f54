"""The docs say what the code does: the configuration page is the schema's, the outputs page and
the README's table of files the registry's, config.yaml's examples are real keys at their real
defaults, and the README is short and links pages that exist."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest
import yaml

from mminfer.measurements import alone_rules
from mminfer.workflow.inputs import read_schema

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def config_docs():
    spec = importlib.util.spec_from_file_location(
        "config_docs", REPO / "scripts" / "config_docs.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_configuration_and_outputs_pages_are_generated_from_schema_and_registry(config_docs):
    page = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert page == config_docs.render(read_schema()), "run python scripts/config_docs.py"
    page = (REPO / "docs" / "outputs.md").read_text(encoding="utf-8")
    assert page == config_docs.render_outputs(), "run python scripts/config_docs.py"


def test_the_timing_jobs_are_listed_once_from_the_registry(config_docs):
    """docs/configuration.md lists the rules time.threads sets, generated from alone_rules();
    neither the schema's description nor config.yaml's comment lists them by hand."""
    page = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
    listed = ", ".join(f"`{rule}`" for rule in alone_rules())
    assert f"The timing jobs: {listed} (" in page
    others = [rule for rule in alone_rules() if rule != "time"]  # "time" names the section too
    described = read_schema()["properties"]["time"]["properties"]["threads"]["description"]
    comment = (REPO / "config.yaml").read_text(encoding="utf-8").split("# time:")[0]
    for text in (described, comment.split("\n\n")[-1]):
        named = [rule for rule in others if re.search(rf"\b{rule}\b", text)]
        assert named == [], text


def test_the_readme_s_table_of_files_is_generated_from_the_registry(config_docs):
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert readme.count(config_docs.README_START) == readme.count(config_docs.README_END) == 1
    assert readme == config_docs.with_readme_table(readme), "run python scripts/config_docs.py"


def test_the_configuration_page_names_every_key(config_docs):
    page = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")

    def keys(properties, prefix=""):
        for key, entry in properties.items():
            yield f"{prefix}{key}"
            yield from keys(entry.get("properties", {}), f"{prefix}{key}.")

    assert [key for key in keys(read_schema()["properties"]) if f"`{key}`" not in page] == []


def commented_examples() -> list[tuple[int, str]]:
    """(indent, "key: value") of every commented YAML line of config.yaml."""
    examples = []
    for line in (REPO / "config.yaml").read_text(encoding="utf-8").splitlines():
        match = re.match(r"^# ( *)([A-Za-z_]+):(.*)$", line)
        if match:
            examples.append((len(match.group(1)), f"{match.group(2)}:{match.group(3)}"))
    return examples


def test_config_yaml_examples_are_schema_keys_and_top_level_ones_their_defaults():
    schema = read_schema()["properties"]
    section = None
    for indent, text in commented_examples():
        key, value = text.split(":", 1)
        if indent == 0:
            assert key in schema, key
            section = schema[key]
            if value.strip():  # a scalar at the top level: at its default
                assert yaml.safe_load(value) == section["default"], key
        elif section is not None and "properties" in section and indent == 2:
            assert key in section["properties"], key


def test_config_yaml_sets_nothing():
    assert yaml.safe_load((REPO / "config.yaml").read_text(encoding="utf-8")) == {}


def test_the_readme_is_short_and_its_links_exist():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 150
    links = re.findall(r"\]\(((?:docs/)?[\w./-]+\.md)(?:#[\w-]+)?\)", readme)
    assert links, "the README links its docs pages"
    assert [link for link in links if not (REPO / link).is_file()] == []
