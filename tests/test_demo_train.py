"""The demo trainer: checkpoints load, training learns, runs repeat exactly, SFT learns only
answers. On a tiny corpus with the micro demo's shape (tests/data/micro.yaml): a few seconds."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from mminfer.demo.corpus import CorpusSpec, build_corpus, tokenizer_training_texts, write_corpus
from mminfer.demo.tokenizer_train import train_tokenizer
from mminfer.demo.train import (
    IGNORE_INDEX,
    PAD_ID,
    assistant_labels,
    assistant_marker,
    learning_rate,
    pack_documents,
    pad_batch,
    pretrain,
    sft,
    sft_examples,
    train_spec,
)
from mminfer.errors import MminferError
from mminfer.model.checkpoints import read_state_dict
from mminfer.model.loading import load_model
from mminfer.model.tokenizer import load_tokenizer
from mminfer.workflow.inputs import parsed_config

TINY_CORPUS = CorpusSpec(seed=0, train_docs=120, val_docs=8, sft_conversations=80)
TINY_VOCAB = 600
REPO = Path(__file__).resolve().parents[1]
DEMO = parsed_config(REPO / "config.yaml")["demo_model"]  # what the workflow trains
MICRO = parsed_config(REPO / "config.yaml", REPO / "tests" / "data" / "micro.yaml")["demo_model"]
# The micro demo's shape, trained a little longer than the end-to-end run does so that
# learning shows.
MICRO_PRETRAIN = replace(
    train_spec(MICRO["pretrain"], 1, MICRO["max_position_embeddings"]),
    steps=30,
    warmup=3,
    log_every=10,
)
MICRO_SFT = replace(
    train_spec(MICRO["sft"], 1, MICRO["max_position_embeddings"]), steps=10, warmup=2, log_every=5
)


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory):
    """A tiny corpus and its tokenizer, written once for the module."""
    folder = tmp_path_factory.mktemp("demo")
    corpus = build_corpus(TINY_CORPUS)
    write_corpus(corpus, folder)
    train_tokenizer(tokenizer_training_texts(corpus), TINY_VOCAB, folder / "tokenizer")
    return folder


@pytest.fixture(scope="module")
def tokenizer(demo_dir):
    return load_tokenizer(demo_dir / "tokenizer")


@pytest.fixture(scope="module")
def pretrained(demo_dir):
    """One MICRO pretraining run: (checkpoint path, summary, log lines)."""
    lines: list[str] = []
    out = demo_dir / "pretrain.pth"
    train, tokenizer = demo_dir / "pretrain_train.jsonl", demo_dir / "tokenizer"
    summary = pretrain(train, tokenizer, MICRO_PRETRAIN, out, log=lines.append)
    return out, summary, lines


@pytest.fixture(scope="module")
def fine_tuned(demo_dir, pretrained):
    """One MICRO SFT run on top of the pretrained checkpoint: (checkpoint path, summary)."""
    out = demo_dir / "sft.pth"
    tokenizer = demo_dir / "tokenizer"
    summary = sft(pretrained[0], demo_dir / "sft.jsonl", tokenizer, MICRO_SFT, out, log=len)
    return out, summary


# --- Pretraining ----------------------------------------------------------------------------------


def test_pretrain_checkpoint_loads_strictly_with_the_spec_shape(pretrained, tokenizer):
    path, _, _ = pretrained
    loaded = load_model(path)  # strict load: every key, every shape
    for name in ("hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads"):
        assert getattr(loaded.config, name) == getattr(MICRO_PRETRAIN, name), name
    assert loaded.config.vocab_size == tokenizer.vocab_size
    assert not path.with_name(path.name + ".tmp").exists()


def test_pretrain_loss_decreases_and_the_run_logs_its_progress_and_summary(pretrained):
    _, summary, lines = pretrained
    assert summary["first_loss"] > math.log(TINY_VOCAB) * 0.8  # starts near a uniform guess
    assert summary["final_loss"] < 0.75 * summary["first_loss"]
    spec = MICRO_PRETRAIN
    progress = [line for line in lines if line.startswith("pretrain step")]
    assert len(progress) == spec.steps // spec.log_every
    assert all("loss" in line and "tokens/s" in line and "elapsed" in line for line in progress)
    assert (
        summary["steps"] == spec.steps
        and summary["tokens"] == spec.steps * spec.batch_size * spec.seq_len
    )
    assert summary["parameters"] > 0 and summary["seconds"] > 0


def test_pretrain_is_deterministic_and_its_seed_changes_the_weights(demo_dir, pretrained):
    def again(name, spec):
        path = demo_dir / name
        train = demo_dir / "pretrain_train.jsonl"
        pretrain(train, demo_dir / "tokenizer", spec, path, log=lambda line: None)
        return read_state_dict(path)

    first, second = read_state_dict(pretrained[0]), again("again.pth", MICRO_PRETRAIN)
    assert first.keys() == second.keys()
    for name in first:
        assert torch.equal(first[name], second[name]), name
    other = again("seed1.pth", replace(MICRO_PRETRAIN, steps=2, seed=1))["lm_head.weight"]
    assert not torch.equal(other, first["lm_head.weight"])


def test_demo_spec_has_the_course_head_dim_and_room_for_the_measurements():
    pretrain_spec, sft_spec = (
        train_spec(DEMO[stage], 2, DEMO["max_position_embeddings"]) for stage in ("pretrain", "sft")
    )
    assert pretrain_spec.hidden_size // pretrain_spec.num_attention_heads == 32
    assert pretrain_spec.num_key_value_heads == 2
    for spec in (pretrain_spec, sft_spec):
        spec.check()
        assert spec.max_position_embeddings >= 1 + 200 + 64  # bos + pretrain prompt + new tokens
    MICRO_PRETRAIN.check()
    MICRO_SFT.check()


def test_a_spec_that_cannot_train_is_a_clear_error(demo_dir):
    bad = replace(MICRO_PRETRAIN, steps=0, seq_len=1000)
    with pytest.raises(
        MminferError, match="steps must be at least 1.*seq_len 1000 exceeds"
    ) as info:
        pretrain(
            demo_dir / "pretrain_train.jsonl", demo_dir / "tokenizer", bad, demo_dir / "bad.pth"
        )
    assert str(info.value).startswith("config key 'demo_model.pretrain': steps must be")
    assert not (demo_dir / "bad.pth").exists()


def test_pack_documents_starts_every_window_at_a_document(tokenizer):
    texts = [
        "민수는 시장에 갔다.",
        "지우는 빵을 먹었다.",
        "서연은 학교에 갔다.",
        "하준은 책을 읽었다.",
    ]
    docs = [
        [tokenizer.bos_token_id] + tokenizer.encode(text) + [tokenizer.eos_token_id]
        for text in texts
    ]
    seq_len = len(docs[0]) + 2  # the first window: document 0 whole, then the start of document 1
    windows = pack_documents(texts, tokenizer, seq_len=seq_len).tolist()
    assert windows[0] == (docs[0] + docs[1])[:seq_len]
    # document 1's rest is dropped: the next window opens with document 2's [bos] at position 0
    assert windows[1] == (docs[2] + docs[3])[:seq_len]
    assert all(window[0] == tokenizer.bos_token_id for window in windows)
    assert len(windows) == 2  # nothing is left over to fill a third window


def test_pack_documents_with_too_little_text_is_a_clear_error(tokenizer):
    with pytest.raises(MminferError, match="fewer than one window of 512") as info:
        pack_documents(["민수는 시장에 갔다."], tokenizer, seq_len=512)
    assert "config key 'demo_model.pretrain.seq_len'" in str(info.value)


def test_learning_rate_warms_up_then_follows_minimind_cosine():
    spec = replace(
        train_spec(DEMO["pretrain"], 1, DEMO["max_position_embeddings"]),
        lr=1e-3,
        steps=100,
        warmup=10,
    )
    for step in (0, 4, 9, 10, 50, 99):  # warmup: MiniMind's value scaled by (step + 1) / warmup
        minimind = 1e-3 * (0.1 + 0.45 * (1 + math.cos(math.pi * step / 100)))
        assert learning_rate(step, spec) == pytest.approx(minimind * min(1, (step + 1) / 10))
    assert learning_rate(50, spec) == pytest.approx(0.55e-3)  # halfway down from lr to lr / 10


# --- SFT labels -----------------------------------------------------------------------------------


def labelled_ids(ids: list[int], labels: list[int]) -> list[int]:
    return [token for token, label in zip(ids, labels) if label != IGNORE_INDEX]


def test_sft_labels_cover_only_the_answer_and_its_im_end(tokenizer):
    answer = "가람 마을의 특산물은 유자차예요."
    messages = [
        {"role": "user", "content": "가람 마을의 특산물은 무엇인가요?"},
        {"role": "assistant", "content": answer},
    ]
    ids = tokenizer.encode(tokenizer.chat_prompt(messages, add_generation_prompt=False))
    labels = assistant_labels(ids, assistant_marker(tokenizer), tokenizer.eos_token_id)

    assert len(labels) == len(ids)
    assert labelled_ids(ids, labels) == tokenizer.encode(answer) + [tokenizer.eos_token_id]
    # where a label is set it is the token itself (the model shifts labels by one on its own)
    assert all(label in (IGNORE_INDEX, token) for token, label in zip(ids, labels))
    # the prompt up to and including '<|im_start|>assistant\n' is not learned ...
    prompt = tokenizer.encode(tokenizer.chat_prompt(messages[:1], add_generation_prompt=True))
    assert ids[: len(prompt)] == prompt
    assert all(label == IGNORE_INDEX for label in labels[: len(prompt)])
    # ... and neither is what the template writes after '<|im_end|>'
    last_eos = len(ids) - 1 - ids[::-1].index(tokenizer.eos_token_id)
    assert all(label == IGNORE_INDEX for label in labels[last_eos + 1 :])


def test_sft_labels_cover_every_assistant_turn_of_a_multi_turn_chat(tokenizer):
    messages = [
        {"role": "user", "content": "안녕하세요."},
        {"role": "assistant", "content": "반가워요."},
        {"role": "user", "content": "민수는 어디에 갔나요?"},
        {"role": "assistant", "content": "민수는 시장에 갔어요."},
    ]
    ids = tokenizer.encode(tokenizer.chat_prompt(messages, add_generation_prompt=False))
    labels = assistant_labels(ids, assistant_marker(tokenizer), tokenizer.eos_token_id)
    eos = tokenizer.eos_token_id
    expected = (
        tokenizer.encode("반가워요.") + [eos] + tokenizer.encode("민수는 시장에 갔어요.") + [eos]
    )
    assert labelled_ids(ids, labels) == expected


def test_sft_labels_of_a_cut_answer_run_to_the_end(tokenizer):
    messages = [
        {"role": "user", "content": "안녕하세요."},
        {"role": "assistant", "content": "안녕하세요. 무엇을 도와드릴까요?"},
    ]
    ids = tokenizer.encode(tokenizer.chat_prompt(messages, add_generation_prompt=False))
    prompt_len = len(
        tokenizer.encode(tokenizer.chat_prompt(messages[:1], add_generation_prompt=True))
    )
    cut = ids[: prompt_len + 2]
    labels = assistant_labels(cut, assistant_marker(tokenizer), tokenizer.eos_token_id)
    assert labels == [IGNORE_INDEX] * prompt_len + cut[prompt_len:]


def test_sft_examples_skip_conversations_cut_before_the_answer(tokenizer):
    messages = [
        {"role": "user", "content": "민수는 어디에 갔나요?"},
        {"role": "assistant", "content": "민수는 시장에 갔어요."},
    ]
    prompt_len = len(
        tokenizer.encode(tokenizer.chat_prompt(messages[:1], add_generation_prompt=True))
    )
    assert sft_examples([messages, messages], tokenizer, max_len=prompt_len + 100) != []
    kept = sft_examples([messages, messages], tokenizer, max_len=prompt_len + 1)
    assert len(kept) == 2 and all(len(ids) == prompt_len + 1 for ids, _ in kept)
    with pytest.raises(MminferError, match="no SFT conversation"):
        sft_examples([messages], tokenizer, max_len=prompt_len)


def test_pad_batch_pads_ids_with_pad_and_labels_with_ignore():
    input_ids, labels = pad_batch([([1, 5, 6], [-100, 5, 6]), ([1, 7], [-100, 7])])
    assert input_ids.tolist() == [[1, 5, 6], [1, 7, PAD_ID]]
    assert labels.tolist() == [[-100, 5, 6], [-100, 7, IGNORE_INDEX]]


# --- SFT run --------------------------------------------------------------------------------------


def test_sft_checkpoint_loads_strictly_and_differs_from_pretraining(fine_tuned, pretrained):
    path, summary = fine_tuned
    load_model(path)
    before, after = read_state_dict(pretrained[0]), read_state_dict(path)
    assert before.keys() == after.keys()
    assert not torch.equal(before["lm_head.weight"], after["lm_head.weight"])
    assert summary["steps"] == MICRO_SFT.steps
    assert summary["final_loss"] < summary["first_loss"]
