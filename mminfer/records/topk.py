"""topk.json: its record and the facts its report section reads.

Pure Python, no torch: the report reads the record without the model code.
"""

from __future__ import annotations

from dataclasses import dataclass

from mminfer.records import ChatPrompt, RunInfo


@dataclass
class Answer:
    """One distinct answer and how many samples gave it."""

    answer: str
    count: int


@dataclass
class TopKTemperature:
    """One temperature of topk.json: step 5's answers with generate's default top_k left on."""

    distinct: int
    samples: int
    top_share: float  # the most common answer's share
    cut_first: float  # the probability top-k removed at the first answer token (every sample's)
    cut_mean: float  # the same, averaged over every step that drew an answer's token or its eos
    steps: int  # the steps cut_mean averages (over all samples)
    answers: list[Answer]  # most common first


@dataclass
class TopK:
    """topk.json: the task's trap, measured: what generate's default top_k does to steps 5 and 6.

    ``temp``: step 5's experiment (temp's question, temperatures, seed, samples, new tokens) with
    top_k on; ``topp``: step 6's survivors when top-k runs first (MiniMind's order: every logit
    below the k-th set to -inf, then top-p).
    """

    top_k: int
    temp: dict[str, TopKTemperature]  # "0.3" -> its answers with top_k on, lowest first
    topp: dict[str, int]  # "0.9" -> survivors of top-k then top-p after [bos] + prefix
    top_k_survivors: int  # survivors of top-k alone at that position (more than k on a tie)
    prefix: str
    samples: int
    new_tokens: int
    seed: int
    prompt: ChatPrompt
    run: RunInfo  # the SFT model's (temp)
    topp_run: RunInfo  # the pretrained model's (topp)
