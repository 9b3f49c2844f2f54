"""One function per rule: rule X of rules/T.smk runs its script, which calls X_job.

The script is scripts/X.py (rules time and temp run time_generation.py and temperature.py); the
job lives in ``mminfer.jobs.T``. It opens its inputs, calls the one function that computes its
file's record and writes it atomically (a failed job leaves no output). Jobs know nothing of
Snakemake: a script names every argument it passes, and a hand run passes the same ones from flags.
"""
