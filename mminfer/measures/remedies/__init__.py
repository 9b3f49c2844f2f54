"""remedies.json: what removes the fixed cost per decode step (issue 48)."""
