"""count.json: the tokens fed into forward both ways. The record."""

from __future__ import annotations

from dataclasses import dataclass

from mminfer.records import PretrainPrompt, RunInfo


@dataclass
class Count:
    """count.json: the tokens fed into forward by each method, beside their formulas."""

    prompt_len: int
    new_tokens: int
    fed_with_cache: int
    fed_without_cache: int
    formula_with_cache: int  # P + (N - 1)
    formula_without_cache: int  # N * P + N (N - 1) / 2
    calls_with_cache: int
    calls_without_cache: int
    prompt: PretrainPrompt
    run: RunInfo
