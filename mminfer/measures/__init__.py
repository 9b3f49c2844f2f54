"""One folder per measuring rule (rules/*.smk): its measuring code (measure.py, torch), each
measurement's record and its arithmetic (<name>.py, torch-free), the decisions over its runs
(decide.py, torch-free) and its caption (<name>.rst; its section's facts, joins and template live
in mminfer/report/sections/). A folder never imports another's.
"""
