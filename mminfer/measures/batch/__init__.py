"""The rule `batch`: batch.json: a left-padded batch against each prompt alone."""
