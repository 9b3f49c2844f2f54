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

if "snakemake" in globals():
    with job_log(snakemake.log[0]):
        rows = []
        for index, name in enumerate(snakemake.params.names):
            records = {
                measurement: read_result(snakemake.input[measurement][index])
                for measurement in compared()
            }
            rows.append(comparison_row(name, **records))
        text = render_comparison(rows)
        write_text_atomic(snakemake.output[0], text)
        logging.getLogger("mminfer").info(
            "compared %d models in %s", len(rows), snakemake.output[0]
        )
elif __name__ == "__main__":
    rule_only("compare", "comparison.md")
