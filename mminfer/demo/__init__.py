"""Embedded demo: a synthetic Korean corpus and a tiny tokenizer for MiniMind.

Used on machines without real MiniMind checkpoints: the workflow builds the
corpus (:mod:`mminfer.demo.corpus`), trains a byte-level BPE tokenizer on it
(:mod:`mminfer.demo.tokenizer_train`) and then trains a tiny MiniMind so the
KV-cache and sampling measurements have a real model to run on.
"""
