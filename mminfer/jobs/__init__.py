"""One function per rule: rule X of rules/T.smk runs scripts/X.py, which calls X_job.

The job lives in ``mminfer.jobs.T``. It opens its inputs, calls the one function that computes its
file's record and writes it atomically (a failed job leaves no output). Jobs know nothing of
Snakemake: a script names every argument it passes, and a hand run passes the same ones from flags.
"""
