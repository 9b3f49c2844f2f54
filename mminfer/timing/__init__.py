"""How mminfer times: the clock of a device, interleaved A/B rounds, the machine's probes and
facts (cores, load, caches, free memory), the non-negative fit. Never a measurement.
"""
