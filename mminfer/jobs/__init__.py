"""The jobs of the rules that measure nothing: the demo's training (rules/demo.smk) and the
pictures (rules/plots.smk), each called by its script.

A measurement's script opens its model and calls the measuring function itself
(docs/development.md, "Adding a measurement").
"""
