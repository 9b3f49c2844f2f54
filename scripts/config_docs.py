"""docs/configuration.md from schemas/config.schema.yaml, the one home of every config key.

    python scripts/config_docs.py            # rewrite docs/configuration.md
    python scripts/config_docs.py --check    # exit 1 when the page is not the schema's

tests/test_docs.py runs the check, so the page never drifts from the schema.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from mminfer.inputs import read_schema  # noqa: E402

PAGE = REPO / "docs" / "configuration.md"
HEADER = """# Configuration

Every key of the workflow's config, with its default and meaning: generated from
`schemas/config.schema.yaml` by `scripts/config_docs.py` (do not edit this page by hand; edit the
schema and rerun the script). `config.yaml` at the top of the repository holds what you change;
`--configfile more.yaml` and `--config key=value` add to it (targets first: see
[troubleshooting](troubleshooting.md)). The config is checked once, before any job runs, with one
message per bad key.
"""


def shown(value) -> str:
    """A default as it would be written in config.yaml."""
    if value is None:
        return "`null`"
    if isinstance(value, str):
        return f"`{value}`"
    return f"`{json.dumps(value, ensure_ascii=False)}`"


def kind(entry: dict) -> str:
    if "enum" in entry:
        return " / ".join(str(value) for value in entry["enum"])
    types = entry.get("type", "object" if "properties" in entry else "")  # a $ref'd section
    if isinstance(types, list):
        return " or ".join(types)
    if types == "array" and "items" in entry:
        return f"list of {entry['items'].get('type', 'values')}"
    return types


def cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def rows(properties: dict, prefix: str = "") -> list[str]:
    """One table row per key; a section's keys follow it, dotted."""
    lines = []
    for key, entry in properties.items():
        name = f"{prefix}{key}"
        default = shown(entry["default"]) if "default" in entry else ""
        if "properties" in entry:  # a section: its keys follow with their defaults
            default = ""
        lines.append(
            f"| `{name}` | {kind(entry)} | {default} | {cell(entry.get('description', ''))} |"
        )
        if "properties" in entry:
            lines += rows(entry["properties"], f"{name}.")
    return lines


def render(schema: dict) -> str:
    top = schema["properties"]
    simple = {key: entry for key, entry in top.items() if "properties" not in entry}
    sections = {key: entry for key, entry in top.items() if "properties" in entry}
    text = [HEADER, "## Inputs and where results go", ""]
    text += ["| key | type | default | meaning |", "| --- | --- | --- | --- |", *rows(simple), ""]
    for key, entry in sections.items():
        text += [f"## `{key}`", "", cell(entry.get("description", "")), ""]
        text += ["| key | type | default | meaning |", "| --- | --- | --- | --- |"]
        text += [*rows(entry["properties"], f"{key}."), ""]
    train = schema.get("$defs", {}).get("train")
    if train:
        text += ["## The demo's training keys (`demo_model.pretrain`, `demo_model.sft`)", ""]
        text += ["| key | type | meaning |", "| --- | --- | --- |"]
        for key, entry in train["properties"].items():
            text.append(f"| `{key}` | {kind(entry)} | {cell(entry.get('description', ''))} |")
        text.append("")
    return "\n".join(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="exit 1 when the page is stale")
    args = parser.parse_args()
    page = render(read_schema())
    if args.check:
        if PAGE.read_text(encoding="utf-8") != page:
            sys.exit(f"{PAGE} is not the schema's: run python scripts/config_docs.py")
        return
    PAGE.write_text(page, encoding="utf-8")


if __name__ == "__main__":
    main()
