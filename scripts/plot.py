"""A PNG drawn from the JSON beside it (sweep.png, temp.png, topp.png, serve.png)."""

from mminfer.report.plot_job import plot_job
from mminfer.workflow.script import rule_only, run_rule

if "snakemake" in globals():
    run_rule(snakemake, plot_job, kind=lambda rule: rule.wildcards.plot)
elif __name__ == "__main__":
    rule_only("plot", "sweep.png")
