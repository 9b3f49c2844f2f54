"""The rule `temp`: temp.json and sampler.json: distinct answers per temperature, the sampler not
the cache."""
