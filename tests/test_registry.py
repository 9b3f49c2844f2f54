"""Every declared measurement (mminfer.measurements) has the files a measurement needs: its record,
its measuring function, its rule writing it, its config section, its caption, its report section
with a facts function, and its rows in the README and the docs (docs/development.md, "Adding a
measurement"). A measurement that lacks one fails here, not as a KeyError when the report runs."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import os
import re
import subprocess
import sys
import typing
from pathlib import Path

import pytest

from mminfer import measurements
from mminfer.measurements import MEASUREMENTS
from mminfer.workflow.inputs import read_schema

REPO = Path(__file__).resolve().parents[1]
NAMES = [entry.name for entry in MEASUREMENTS]
FRAME_SECTIONS = {"run"}  # report.md.j2's own part, not a measurement
OTHER_CAPTIONS = {"plot", "report_md", "beyond_md", "workflow"}  # pictures, reports, workflow


def rules_text() -> str:
    return "\n".join(path.read_text(encoding="utf-8") for path in (REPO / "rules").glob("*.smk"))


def rule_body(rule: str) -> str:
    match = re.search(rf"^rule {rule}:\n(.*?)(?=^rule |\Z)", rules_text(), re.M | re.S)
    assert match, f"no rule {rule} in rules/*.smk"
    return match.group(1)


# One name from rule to folder; the task fixes the one exception: rule `time` keeps its name
# (`snakemake -R time`) and runs scripts/time_generation.py, as a scripts/time.py run by hand would
# shadow the standard library's `time`. (Rule cache writing same.json and count.json is the other.)
SCRIPT_OF = {"time": "time_generation"}


@pytest.mark.parametrize("rule", measurements.rules())
def test_a_measuring_rule_its_file_its_script_and_its_folder_share_its_name(rule):
    text = (REPO / "rules" / f"{rule}.smk").read_text(encoding="utf-8")
    body = re.search(rf"^rule {rule}:\n(.*?)(?=^rule |\Z)", text, re.M | re.S)
    script = SCRIPT_OF.get(rule, rule)
    assert body and f'script:\n        "../scripts/{script}.py"' in body.group(1)
    assert (REPO / "scripts" / f"{script}.py").is_file()
    assert (REPO / "mminfer" / "measures" / rule).is_dir()


def test_the_snakefile_includes_the_measuring_rules_in_report_order():
    snakefile = (REPO / "Snakefile").read_text(encoding="utf-8")
    included = re.findall(r'^include: "rules/(\w+)\.smk"$', snakefile, re.M)
    assert [name for name in included if name in measurements.rules()] == measurements.rules()


def test_names_and_files_are_unique():
    assert len(set(NAMES)) == len(NAMES)
    files = [entry.filename for entry in MEASUREMENTS]
    assert len(set(files)) == len(files)


@pytest.mark.parametrize("name", NAMES)
def test_its_key_is_one_snakemake_takes_and_its_rule_names_its_output_by_it(name):
    """Snakemake's named lists refuse a list method's name (``snakemake.output.count`` is
    list.count): count.json's key among a rule's inputs and outputs is ``count_json``."""
    named = pytest.importorskip("snakemake.iocontainers").Namedlist
    key = measurements.key(name)
    assert getattr(named(fromdict={key: f"{name}.json"}), key) == f"{name}.json"
    entry = measurements.measurement(name)
    for written in re.findall(rf'(\w+)=measured\("{name}", ', rule_body(entry.rule)):
        assert written == key, entry.rule


def test_count_json_is_keyed_count_json_and_the_task_has_its_six_files():
    assert measurements.key("count") == "count_json" and measurements.key("same") == "same"
    assert sorted(measurements.task_files().values()) == sorted(
        ["same.json", "count.json", "time.json", "kvbytes.json", "temp.json", "topp.json"]
    )


@pytest.mark.parametrize("name", NAMES)
def test_its_record_is_a_record_its_measuring_function_exists_and_its_rule_writes_it(name):
    entry = measurements.measurement(name)
    assert dataclasses.is_dataclass(entry.record) or typing.get_origin(entry.record) is dict
    assert callable(measurements.resolve(entry.measured_by))
    assert re.search(rf'measured\("{name}", ', rule_body(entry.rule)), entry.rule


@pytest.mark.parametrize("rule", measurements.rules())
def test_its_rule_s_threads_and_torch_s_come_from_its_entry_s_alone(rule):
    """rules/common.smk decides once: rule_threads gives a timing rule every core, and
    torch_threads gives its torch time.threads or, null, the job's threads; each timing rule also
    holds time.threads itself, so that editing it reruns the rule."""
    body = rule_body(rule)
    assert f'    threads: rule_threads("{rule}")\n' in body
    timing = rule in measurements.alone_rules()
    assert ("torch_threads=torch_threads," in body) == timing
    assert ('threads=config["time"]["threads"],' in body) == timing


def test_no_script_decides_the_timing_threads_itself():
    """A timing script reads torch's threads as decided (snakemake.params.torch_threads)."""
    for path in (REPO / "scripts").glob("*.py"):
        assert "params.threads" not in path.read_text(encoding="utf-8"), path


@pytest.mark.parametrize("rule", measurements.rules())
def test_its_rule_reads_resources_and_content_come_from_its_entry(rule):
    body = rule_body(rule)
    assert f'**reads("{rule}"),' in body  # the inputs: the entry's reads
    assert f'sha256=contents("{rule}"),' in body  # their content under params
    assert f'**model_resources("{rule}"),' in body  # --exclusive from the entry's alone


def test_a_rule_s_measurements_agree_on_what_it_reads():
    for rule in measurements.rules():
        assert set(measurements.rule_reads(rule)) <= set(measurements.READS)
    with pytest.raises(KeyError, match="reads"):
        measurements.rule_reads("no such rule")


def test_the_rules_write_only_declared_measurements():
    assert set(re.findall(r'measured\("(\w+)", ', rules_text())) == set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_its_config_section_is_in_the_schema(name):
    section = measurements.measurement(name).config_section
    assert "properties" in read_schema()["properties"][section], section


@pytest.mark.parametrize("name", NAMES)
def test_its_caption_exists(name):
    assert (REPO / measurements.measurement(name).caption).is_file()


def test_every_caption_is_a_measurements_or_known():
    captions = {path.stem for path in (REPO / "report").glob("*.rst")}
    captions |= {path.stem for path in (REPO / "mminfer" / "measures").glob("*/*.rst")}
    assert captions == set(NAMES) | OTHER_CAPTIONS


@pytest.mark.parametrize("name", NAMES)
def test_its_record_lives_in_its_rules_folder(name):
    entry = measurements.measurement(name)
    homes = {f"mminfer.measures.{other.rule}.{other.name}" for other in MEASUREMENTS}
    record_module, _ = measurements.declared(entry.record)
    assert record_module in homes, entry.record


RECORD_MODULES = [
    path
    for path in sorted((REPO / "mminfer" / "measures").glob("*/*.py"))
    if path.stem not in ("__init__", "measure", "profile", "decide")  # profile: torch's profiler
]


def section_function(name: str, kind: str):
    """Measurement ``name``'s facts or glance function (``kind``), imported."""
    return measurements.resolve(getattr(measurements.measurement(name), kind))


def named(name: str, kind: str, function) -> str:
    """The name a facts or glance function must have: ``<name>_<kind>`` where it reads its rule's
    records only; a join of another rule's, named after every measurement it reads, in its
    parameters' order (``sweep_time_facts(sweep, time)``)."""
    parameters = inspect.signature(function).parameters
    rules = {measurements.measurement(p).rule for p in parameters}
    if rules != {measurements.measurement(name).rule}:
        return "_".join(parameters) + f"_{kind}"
    return f"{name}_{kind}"


def section_module(name: str) -> str:
    """Where measurement ``name``'s facts, glance and sentences live: its section's folder."""
    return f"mminfer.report.sections.{measurements.measurement(name).section_folder}.{name}"


@pytest.mark.parametrize("name", [entry.name for entry in MEASUREMENTS if entry.facts is not None])
def test_its_section_template_and_facts_exist_in_its_section_folder(name):
    entry = measurements.measurement(name)
    assert (REPO / "mminfer" / "report" / "sections" / entry.template).is_file()
    assert entry.template.startswith(f"{entry.section_folder}/")
    function = section_function(name, "facts")
    assert function.__name__ == named(name, "facts", function)


SECTION_FUNCTIONS = [
    pytest.param(entry.name, kind, id=f"{entry.name}_{kind}")
    for entry in MEASUREMENTS
    for kind in ("facts", "glance")
    if getattr(entry, kind) is not None
]


@pytest.mark.parametrize(("name", "kind"), SECTION_FUNCTIONS)
def test_each_parameter_of_its_facts_and_glance_is_a_measurement_typed_as_its_record(name, kind):
    """render_report passes a facts or glance function the record each parameter names: the
    parameter ``sweep`` gets sweep.json's Sweep (or None where the report has none), so it is
    annotated ``Sweep`` or ``Sweep | None``; its own record first, given always."""
    function = section_function(name, kind)
    assert function.__name__ == named(name, kind, function)
    parameters = list(inspect.signature(function).parameters.values())
    assert parameters[0].name == name
    for parameter in parameters:
        assert parameter.name in NAMES, (
            f"{function.__name__}: {parameter.name} names no measurement"
        )
        _, record = measurements.declared(measurements.measurement(parameter.name).record)
        typed = {record, f"{record} | None"} if parameter is not parameters[0] else {record}
        assert parameter.annotation in typed, (function.__name__, parameter)


@pytest.mark.parametrize(("name", "kind"), SECTION_FUNCTIONS)
def test_its_facts_and_glance_live_in_its_section_s_module(name, kind):
    """mminfer/report/sections/<section>/<name>.py holds measurement <name>'s facts and glance,
    a join of other rules' records included (a section's folder holds the joins it reads)."""
    reference = getattr(measurements.measurement(name), kind)
    function = measurements.resolve(reference)
    assert reference == f"{function.__module__}:{function.__name__}", reference
    assert function.__module__ == section_module(name), reference


SECTION_MODULES = [
    path
    for path in sorted((REPO / "mminfer" / "report" / "sections").glob("*/*.py"))
    if path.stem not in ("__init__", "run", "plot", "joins")  # run: the run section's; plot: its
    # picture; joins: what its record decides beside another's
]


@pytest.mark.parametrize("path", SECTION_MODULES, ids=str)
def test_every_facts_and_glance_function_of_a_section_module_is_its_entry_s_or_called_by_it(path):
    """A ``<name>_facts`` or ``<name>_glance`` its entry does not name, nor its entry's function
    calls, would never render; a section module is its measurement's (<section>/<name>.py)."""
    module = importlib.import_module(f"mminfer.report.sections.{path.parent.name}.{path.stem}")
    assert section_module(path.stem) == module.__name__
    for attribute, value in vars(module).items():
        if not (inspect.isfunction(value) and value.__module__ == module.__name__):
            continue
        for kind in ("facts", "glance"):
            if attribute.endswith(f"_{kind}"):
                reference = getattr(measurements.measurement(path.stem), kind)
                if reference == f"{module.__name__}:{attribute}":
                    continue
                entry_function = inspect.getsource(measurements.resolve(reference))
                assert re.search(rf"\b{attribute}\(", entry_function), (reference, attribute)


@pytest.mark.parametrize("path", RECORD_MODULES, ids=str)
def test_a_record_module_decides_and_says_nothing(path):
    """A measures folder's record module holds the record and the decisions over its runs; the
    facts, the glance and the sentences are its section's (mminfer/report/sections/)."""
    module = importlib.import_module(f"mminfer.measures.{path.parent.name}.{path.stem}")
    said = [
        attribute
        for attribute, value in vars(module).items()
        if attribute == "SENTENCES"
        or (inspect.isfunction(value) and attribute.endswith(("_facts", "_glance")))
    ]
    assert said == [], said


def test_the_dag_start_imports_no_torch_and_no_matplotlib():
    """rules/common.smk imports mminfer's modules (mminfer.measurements among them) while
    Snakemake builds the DAG: none may pull in torch or matplotlib, a second of every start."""
    common = (REPO / "rules" / "common.smk").read_text(encoding="utf-8")
    modules = []
    for package, names in re.findall(r"^from (mminfer[\w.]*) import (.+)$", common, re.M):
        if package == "mminfer":
            modules += [f"mminfer.{name.strip()}" for name in names.split(",")]
        else:
            modules.append(package)
    assert "mminfer.measurements" in modules
    code = (
        f"import importlib, sys\nfor m in {modules!r}: importlib.import_module(m)\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'torch', 'matplotlib'}))"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    ran = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert ran.stdout.strip() == "[]", ran.stdout


def runtime_imports(path: Path) -> set[str]:
    """The modules a file imports when it runs (``if TYPE_CHECKING:`` blocks left out)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            node.body = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module)
        elif isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
    return imported


SHARED_RECORDS = sorted((REPO / "mminfer" / "records").glob("*.py"))


@pytest.mark.parametrize("path", RECORD_MODULES + SHARED_RECORDS, ids=str)
def test_a_records_module_imports_no_other_measurement_no_renderer_and_no_torch(path):
    """A measurement's record module reads its own folder's records and mminfer/records/ only; the
    shared records read nothing of a measurement (import-linter's contracts say the same of the
    folders, tests/test_layers.py)."""
    imported = runtime_imports(path)
    own = f"mminfer.measures.{path.parent.name}." if path.parent.parent.name == "measures" else None
    others = {
        name
        for name in imported
        if name.startswith("mminfer.measures.") and (own is None or not name.startswith(own))
    }
    assert not others, others
    assert not {name for name in imported if name.endswith(".measure")}, imported
    assert "torch" not in imported, imported
    assert not {name for name in imported if name.startswith("mminfer.report")}, imported


def test_measuring_code_never_imports_the_renderer():
    for path in (REPO / "mminfer").glob("**/*.py"):
        if "report" not in path.relative_to(REPO / "mminfer").parts[:1]:
            assert "mminfer.report.render" not in runtime_imports(path), path


def test_every_section_template_is_a_measurements():
    sections = REPO / "mminfer" / "report" / "sections"
    templates = {path.name.removesuffix(".md.j2") for path in sections.glob("*/*.md.j2")}
    with_section = {entry.name for entry in MEASUREMENTS if entry.facts is not None}
    assert templates == with_section | FRAME_SECTIONS


@pytest.mark.parametrize("name", NAMES)
def test_its_file_has_rows_in_the_readme_and_the_docs(name):
    file = measurements.measurement(name).filename
    assert f"`{file}`" in (REPO / "README.md").read_text(encoding="utf-8")
    assert f"| `{file}` |" in (REPO / "docs" / "outputs.md").read_text(encoding="utf-8")
    assert file in (REPO / "docs" / "measurements.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("picture", list(measurements.pictures()))
def test_every_picture_has_its_drawing_function(picture):
    assert callable(measurements.drawing(picture))


def test_a_result_file_is_read_back_as_its_measurements_record(tmp_path):
    from reportdata import time_record

    from mminfer.measures.time.time import Timing
    from mminfer.records import write_record

    write_record(tmp_path / "time.json", time_record())
    assert isinstance(measurements.read_result(tmp_path / "time.json"), Timing)
    with pytest.raises(KeyError, match="no measurement's result file"):
        measurements.read_result(tmp_path / "other.json")
