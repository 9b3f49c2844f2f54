"""comparison.md: the task's model and every model of config key 'models', side by side."""

from mminfer.compare import PER_MODEL_FILES, compare_job
from mminfer.script import job_log

if "snakemake" in globals():
    inputs = {key: list(snakemake.input[key]) for key in PER_MODEL_FILES}
    with job_log(snakemake.log[0]):
        compare_job(snakemake.params.names, inputs, snakemake.output[0])
