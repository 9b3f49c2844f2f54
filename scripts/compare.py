"""comparison.md: the task's model and every model of config key 'models', side by side.

Each input is one compared measurement's file over the models (mminfer.measurements.compared(),
the entries with `compared`), in the order of params.names; one row per model, from the records of
that model, each handed to comparison_row under its measurement's name.
"""

import logging

from mminfer.io import write_text_atomic
from mminfer.measurements import compared, read_result
from mminfer.report.compare import comparison_row, render_comparison
from mminfer.workflow.script import job_log, rule_only


def compare(names, files, out):
    """A row per model of ``names``, from its files among ``files`` (the inputs); write ``out``."""
    rows = []
    for index, name in enumerate(names):
        records = {
            measurement: read_result(files[measurement][index]) for measurement in compared()
        }
        rows.append(comparison_row(name, **records))
    write_text_atomic(out, render_comparison(rows))
    logging.getLogger("mminfer").info("compared %d models in %s", len(rows), out)


if "snakemake" in globals():
    with job_log(snakemake.log[0]):
        compare(names=snakemake.params.names, files=snakemake.input, out=snakemake.output[0])
elif __name__ == "__main__":
    rule_only("compare", "comparison.md")
