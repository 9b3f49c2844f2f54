"""Rules of rules/demo.smk: the embedded demo, built as cached targets.

The corpus, the tokenizer, the pretrained model, the SFT model.
"""

from __future__ import annotations

import logging
from pathlib import Path

from mminfer.demo.corpus import CorpusSpec, build_corpus, training_texts, write_corpus
from mminfer.demo.tokenizer_train import train_tokenizer
from mminfer.io import read_jsonl_field

log = logging.getLogger("mminfer")


def demo_corpus_job(corpus: dict, out_dir) -> dict:
    """The synthetic Korean corpus in MiniMind's formats.

    ``corpus`` is config key demo_model.corpus.
    """
    spec = CorpusSpec(**corpus)
    built = build_corpus(spec)
    paths = write_corpus(built, out_dir)
    log.info(
        "corpus (seed %d): %d train docs, %d val docs, %d SFT conversations, %d villages",
        spec.seed,
        len(built.train),
        len(built.val),
        len(built.sft),
        len(built.facts),
    )
    return paths


def demo_tokenizer_job(train, sft, vocab_size: int, out_dir) -> Path:
    """A byte-level BPE tokenizer trained on the corpus files, with a ChatML chat template."""
    texts = training_texts(
        read_jsonl_field(train, "text", kind="corpus"),
        read_jsonl_field(sft, "conversations", kind="corpus"),
    )
    folder = train_tokenizer(texts, vocab_size, out_dir)
    log.info("tokenizer in %s (vocab_size asked %d)", folder, vocab_size)
    return folder


def demo_pretrain_job(corpus, tokenizer, train: dict, max_positions: int, threads: int, out):
    """Pretrain the demo MiniMind on ``corpus`` (``train``: config key demo_model.pretrain)."""
    from mminfer.demo.train import pretrain, train_spec

    spec = train_spec(train, threads, max_positions)
    summary = pretrain(corpus, tokenizer, spec, out, log=log.info)
    log.info("pretrain done: %s", {k: v for k, v in summary.items() if k != "spec"})
    return summary


def demo_sft_job(pretrain, sft, tokenizer, train: dict, max_positions: int, threads: int, out):
    """Fine-tune the pretrained demo model on the SFT conversations (``train``: config key
    demo_model.sft)."""
    from mminfer.demo.train import sft as fine_tune
    from mminfer.demo.train import train_spec

    spec = train_spec(train, threads, max_positions)
    summary = fine_tune(pretrain, sft, tokenizer, spec, out, log=log.info)
    log.info("sft done: %s", {k: v for k, v in summary.items() if k != "spec"})
    return summary
