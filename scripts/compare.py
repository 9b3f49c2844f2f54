"""comparison.md: the task's model and every model of config key 'models', side by side.

Each input (mminfer.measurements.COMPARED: time, kvbytes, temp, topp, capacity, conversation) is
the list of that file over the models, in the order of params.names; one row per model.
"""

import logging

from mminfer.compare import comparison_row, render_comparison
from mminfer.io import write_text_atomic
from mminfer.measurements import read_result
from mminfer.script import job_log, rule_only

if "snakemake" in globals():
    with job_log(snakemake.log[0]):
        rows = []
        for index, name in enumerate(snakemake.params.names):
            row = comparison_row(
                name,
                read_result(snakemake.input.time[index]),
                read_result(snakemake.input.kvbytes[index]),
                read_result(snakemake.input.temp[index]),
                read_result(snakemake.input.topp[index]),
                read_result(snakemake.input.capacity[index]),
                read_result(snakemake.input.conversation[index]),
            )
            rows.append(row)
        text = render_comparison(rows)
        write_text_atomic(snakemake.output[0], text)
        logging.getLogger("mminfer").info(
            "compared %d models in %s", len(rows), snakemake.output[0]
        )
elif __name__ == "__main__":
    rule_only("compare", "comparison.md")
