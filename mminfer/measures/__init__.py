"""One folder per measuring rule (rules/*.smk): its measuring code (measure.py, torch), each
measurement's record with its facts and sentences' claims (<name>.py, torch-free), its section
template (<name>.md.j2) and caption (<name>.rst). A folder never imports another's.
"""
