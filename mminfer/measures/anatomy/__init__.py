"""The rule `anatomy`: anatomy.json: step 1's generate taken apart, call by call."""
