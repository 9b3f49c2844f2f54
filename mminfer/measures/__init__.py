"""One folder per measuring rule (rules/*.smk): its measuring code (measure.py, torch), each
measurement's record with its facts and sentences' claims (<name>.py, torch-free), its section
caption (<name>.rst; its section's facts, sentences and template live in
mminfer/report/sections/). A folder never imports another's.
"""
