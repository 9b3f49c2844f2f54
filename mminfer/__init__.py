"""mminfer: measure what the KV cache and sampling do in MiniMind's ``generate``.

The package holds everything the workflow's scripts share: the MiniMind-compatible model and its
loader, the tokenizer and chat format, the prompts, and one module per measurement.
"""

__version__ = "0.1.0"
