"""What the Snakemake workflow needs besides the measurements: the config and input files
(inputs), the scripts' log and flags (script), the results lock, the inputs' fingerprints, the
cluster's checks.
"""
