"""The rule `cache`: same.json and count.json: greedy generation with and without the cache, the
tokens fed."""
