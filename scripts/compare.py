"""comparison.md: the task's model and every model of config key 'models', side by side."""

from mminfer.jobs.report import compare_job
from mminfer.script import job_log, rule_only

if "snakemake" in globals():
    with job_log(snakemake.log[0]):
        compare_job(
            names=snakemake.params.names,
            time=list(snakemake.input.time),
            kvbytes=list(snakemake.input.kvbytes),
            temp=list(snakemake.input.temp),
            topp=list(snakemake.input.topp),
            capacity=list(snakemake.input.capacity),
            out=snakemake.output[0],
        )
elif __name__ == "__main__":
    rule_only("compare", "comparison.md")
