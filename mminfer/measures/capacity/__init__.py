"""The rule `capacity`: capacity.json: the cache's bytes per token and per card."""
