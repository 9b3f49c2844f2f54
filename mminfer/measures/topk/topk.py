"""topk.json: the task's trap, measured. Its record and arithmetic.

Pure Python, no torch: the report reads the record without the model code.
"""

from __future__ import annotations

from dataclasses import dataclass

from mminfer.records import Answer, ChatPrompt, RunInfo


@dataclass
class TopKTemperature:
    """One temperature of topk.json: step 5's answers with generate's default top_k left on."""

    distinct: int
    samples: int
    top_share: float  # the most common answer's share
    cut_first: float  # the probability top-k removed at the first answer token (every sample's)
    cut_mean: float  # the same, averaged over every step that drew an answer's token or its eos
    steps: int  # the steps cut_mean averages (over all samples)
    ids_past_tokenizer: int  # the answers' ids at or past the tokenizer's end, shown as ⟨id N⟩
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
    top_k_mass: float  # the probability those survivors hold there (T = 1): top-p after top-k
    # counts within it, renormalised, so it reaches p sooner than top-p alone
    prefix: str
    samples: int
    new_tokens: int
    seed: int
    prompt: ChatPrompt
    run: RunInfo  # the SFT model's (temp); its inputs: every file the result came from
    topp_run: RunInfo  # the pretrained model's (topp)
