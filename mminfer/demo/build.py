"""One function per demo rule: corpus, tokenizer, pretrain, SFT (see rules/demo.smk).

Like :mod:`mminfer.jobs`, these know nothing of Snakemake; the scripts pass them plain values.
"""

from __future__ import annotations

import logging
from dataclasses import fields
from pathlib import Path

from mminfer.demo.corpus import CorpusSpec, build_corpus, training_texts, write_corpus
from mminfer.demo.tokenizer_train import train_tokenizer
from mminfer.errors import MminferError
from mminfer.io import read_jsonl_field

log = logging.getLogger("mminfer")


def corpus_job(params: dict, out_dir) -> dict:
    """The synthetic Korean corpus in MiniMind's formats."""
    spec = CorpusSpec(**params)
    corpus = build_corpus(spec)
    paths = write_corpus(corpus, out_dir)
    log.info(
        "corpus (seed %d): %d train docs, %d val docs, %d SFT conversations, %d villages",
        spec.seed,
        len(corpus.train),
        len(corpus.val),
        len(corpus.sft),
        len(corpus.facts),
    )
    return paths


def tokenizer_texts(train_jsonl, sft_jsonl) -> list[str]:
    """The corpus files' texts, as :func:`mminfer.demo.corpus.training_texts` gathers them."""
    return training_texts(
        read_jsonl_field(train_jsonl, "text", kind="corpus"),
        read_jsonl_field(sft_jsonl, "conversations", kind="corpus"),
    )


def tokenizer_job(train_jsonl, sft_jsonl, vocab_size: int, out_dir) -> Path:
    """A byte-level BPE tokenizer trained on the corpus, with a ChatML chat template."""
    folder = train_tokenizer(tokenizer_texts(train_jsonl, sft_jsonl), vocab_size, out_dir)
    log.info("tokenizer in %s (vocab_size asked %d)", folder, vocab_size)
    return folder


def train_spec(params: dict, threads: int, max_positions: int):
    """TrainSpec from a config section (demo_model.pretrain or .sft) and the demo's rotary table length
    (demo_model.max_position_embeddings); unknown keys are a clear error."""
    from mminfer.demo.train import TrainSpec

    known = {f.name for f in fields(TrainSpec)}
    unknown = sorted(set(params) - known)
    if unknown:
        raise MminferError(
            f"config key 'demo_model' has unknown training keys: {', '.join(unknown)}."
        )
    return TrainSpec(**params, max_position_embeddings=max_positions, threads=max(1, int(threads)))


def pretrain_job(
    train_jsonl, tokenizer_dir, params: dict, max_positions: int, threads: int, out_pth
) -> dict:
    from mminfer.demo.train import pretrain

    summary = pretrain(
        train_jsonl,
        tokenizer_dir,
        train_spec(params, threads, max_positions),
        out_pth,
        log=log.info,
    )
    log.info("pretrain done: %s", {k: v for k, v in summary.items() if k != "spec"})
    return summary


def sft_job(
    pretrain_pth, sft_jsonl, tokenizer_dir, params: dict, max_positions: int, threads: int, out_pth
) -> dict:
    from mminfer.demo.train import sft

    summary = sft(
        pretrain_pth,
        sft_jsonl,
        tokenizer_dir,
        train_spec(params, threads, max_positions),
        out_pth,
        log=log.info,
    )
    log.info("sft done: %s", {k: v for k, v in summary.items() if k != "spec"})
    return summary
