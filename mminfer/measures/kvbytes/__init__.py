"""The rule `kvbytes`: kvbytes.json: the cache's measured bytes against the formula."""
