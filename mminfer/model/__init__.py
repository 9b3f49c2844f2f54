"""The model and everything that runs it: mminfer's twin of MiniMind's model (twin), loading
checkpoints and LoRA, MiniMind's own source, the tokenizer and prompts, greedy generation both
ways, counting forward's calls, sampled draws, the cache's bytes, the finite checks. Imports torch;
never a measurement.
"""
