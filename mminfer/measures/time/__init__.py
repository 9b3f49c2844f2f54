"""The rule `time`: time.json and latency.json: the two paths timed, and what a user waits for."""
