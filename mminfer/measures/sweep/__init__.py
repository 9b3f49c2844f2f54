"""The rule `sweep`: sweep.json: time and tokens fed against the generation length."""
