"""The rule `topk`: topk.json: generate's default top_k left on."""
