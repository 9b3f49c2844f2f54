"""Tests for the embedded demo corpus and its tokenizer (fast: a few seconds)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from jinja2.sandbox import ImmutableSandboxedEnvironment
from tokenizers import Tokenizer

from mminfer.demo.corpus import (
    GARAM_QUESTION,
    GARAM_VILLAGE,
    VILLAGES,
    CorpusSpec,
    build_corpus,
    by,
    garam_specialty,
    obj,
    tokenizer_training_texts,
    topic,
    write_corpus,
)
from mminfer.demo.tokenizer_train import CHAT_TEMPLATE, train_tokenizer
from mminfer.workflow.inputs import parsed_config

SMALL_SPEC = CorpusSpec(seed=0, train_docs=400, val_docs=10, sft_conversations=200)


DEMO = parsed_config(Path(__file__).resolve().parents[1] / "config.yaml")["demo_model"]
VOCAB_SIZE = DEMO["vocab_size"]


@pytest.fixture(scope="module")
def corpus():
    """The corpus the workflow builds."""
    return build_corpus(CorpusSpec(**DEMO["corpus"]))


@pytest.fixture(scope="module")
def tokenizer_dir(corpus, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("tokenizer")
    return train_tokenizer(tokenizer_training_texts(corpus), VOCAB_SIZE, out)


@pytest.fixture(scope="module")
def tokenizer(tokenizer_dir) -> Tokenizer:
    return Tokenizer.from_file(str(tokenizer_dir / "tokenizer.json"))


def _sentences(documents: list[str]) -> list[str]:
    return [sentence.rstrip(".") for document in documents for sentence in document.split(". ")]


def _next_words(text: str, context: str) -> Counter:
    """Words that directly follow ``context + " "`` in text."""
    words: Counter = Counter()
    for tail in text.split(context + " ")[1:]:
        words[tail.split(" ", 1)[0]] += 1
    return words


def test_corpus_is_deterministic_for_a_seed_and_differs_for_another_seed(tmp_path):
    first = build_corpus(SMALL_SPEC)
    again = build_corpus(SMALL_SPEC)
    other = build_corpus(CorpusSpec(seed=1, train_docs=400, val_docs=10, sft_conversations=200))
    assert first == again and first.facts == other.facts
    assert first.train != other.train and first.val != other.val and first.sft != other.sft
    written, rewritten = write_corpus(first, tmp_path / "a"), write_corpus(again, tmp_path / "b")
    for name, path in written.items():  # byte-identical files
        assert path.read_bytes() == rewritten[name].read_bytes(), name


def test_particles_follow_the_final_consonant():
    assert [topic("민수"), topic("서연"), obj("유자차"), obj("인삼")] == [
        "민수는",
        "서연은",
        "유자차를",
        "인삼을",
    ]
    assert [by("유자차"), by("벌꿀"), by("인삼")] == ["유자차로", "벌꿀로", "인삼으로"]


def test_every_village_has_one_specialty_and_garam_is_always_the_same(corpus):
    assert list(corpus.facts) == list(VILLAGES)
    specialties = list(corpus.facts.values())
    assert len(set(specialties)) == len(specialties)
    assert corpus.facts[GARAM_VILLAGE] == garam_specialty()

    others = [s for v, s in corpus.facts.items() if v != GARAM_VILLAGE]
    garam_fact_sentences = 0
    for sentence in _sentences(corpus.train + corpus.val):
        if GARAM_VILLAGE not in sentence:
            continue
        for specialty in others:
            assert specialty not in sentence, sentence
        if garam_specialty() in sentence:
            garam_fact_sentences += 1
    assert garam_fact_sentences >= 50


def test_garam_question_is_asked_in_sft_and_answers_name_the_specialty(corpus):
    answers = []
    for conversation in corpus.sft:
        assert [turn["role"] for turn in conversation] == ["user", "assistant"]
        if conversation[0]["content"] == GARAM_QUESTION:
            answers.append(conversation[1]["content"])
    assert len(set(answers)) >= 5 and all(garam_specialty() in answer for answer in answers)


def test_validation_split_has_six_docs_longer_than_200_tokens(corpus, tokenizer):
    assert len(corpus.val) >= 6
    joined = " ".join(corpus.val[:6])
    assert len(tokenizer.encode(joined).ids) > 200


def test_written_jsonl_files_parse_line_by_line_with_the_right_keys(corpus, tmp_path):
    paths = write_corpus(corpus, tmp_path)
    assert set(paths) == {"pretrain_train.jsonl", "pretrain_val.jsonl", "sft.jsonl", "facts.json"}
    assert not list(tmp_path.glob("*.tmp"))

    for name, key, expected in (
        ("pretrain_train.jsonl", "text", corpus.train),
        ("pretrain_val.jsonl", "text", corpus.val),
        ("sft.jsonl", "conversations", corpus.sft),
    ):
        lines = paths[name].read_text(encoding="utf-8").splitlines()
        assert [json.loads(line) for line in lines] == [{key: value} for value in expected]
    assert "가람" in paths["sft.jsonl"].read_text(encoding="utf-8")  # ensure_ascii=False

    facts = json.loads(paths["facts.json"].read_text(encoding="utf-8"))
    assert facts == corpus.facts


def test_tokenizer_special_tokens_have_ids_0_1_2(tokenizer, tokenizer_dir):
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    assert [tokenizer.token_to_id(token) for token in specials] == [0, 1, 2]
    config = json.loads((tokenizer_dir / "tokenizer_config.json").read_text(encoding="utf-8"))
    assert (
        config
        | {
            "bos_token": "<|im_start|>",
            "eos_token": "<|im_end|>",
            "pad_token": "<|endoftext|>",
            "unk_token": "<|endoftext|>",
            "add_bos_token": False,
            "add_eos_token": False,
            "tokenizer_class": "PreTrainedTokenizerFast",
        }
        == config
    )
    assert sorted(config["added_tokens_decoder"]) == ["0", "1", "2"]
    assert tokenizer.get_vocab_size() <= VOCAB_SIZE


def test_tokenizer_training_is_deterministic(tmp_path):
    texts = tokenizer_training_texts(build_corpus(SMALL_SPEC))
    first = train_tokenizer(texts, 1024, tmp_path / "a")
    again = train_tokenizer(texts, 1024, tmp_path / "b")
    for name in ("tokenizer.json", "tokenizer_config.json"):
        assert (first / name).read_bytes() == (again / name).read_bytes(), name


def test_tokenizer_round_trips_korean_text(tokenizer, corpus):
    for text in (
        corpus.val[0],
        GARAM_QUESTION,
        "처음 보는 문장도 바이트 단위라서 그대로 돌아온다!",
    ):
        assert tokenizer.decode(tokenizer.encode(text).ids) == text


def test_chat_template_renders_chatml():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    template = env.from_string(CHAT_TEMPLATE)
    messages = [
        {"role": "system", "content": "짧게 답하세요."},
        {"role": "user", "content": GARAM_QUESTION},
        {"role": "assistant", "content": "유자차입니다."},
    ]
    rendered = template.render(messages=messages, add_generation_prompt=False)
    assert rendered == (
        "<|im_start|>system\n짧게 답하세요.<|im_end|>\n"
        "<|im_start|>user\n가람 마을의 특산물은 무엇인가요?<|im_end|>\n"
        "<|im_start|>assistant\n유자차입니다.<|im_end|>\n"
    )
    prompt = template.render(messages=messages[1:2], add_generation_prompt=True)
    user = "<|im_start|>user\n가람 마을의 특산물은 무엇인가요?<|im_end|>\n"
    assert prompt == user + "<|im_start|>assistant\n"


def test_minsu_context_is_open_and_garam_specialty_context_is_sharp(corpus):
    text = " ".join(corpus.train)
    after_minsu = _next_words(text, "민수는")
    assert len(after_minsu) >= 20
    after_garam = _next_words(text, "가람 마을의 특산물은")
    assert len(after_garam) == 1
    assert next(iter(after_garam)).startswith(garam_specialty())
    assert sum(after_garam.values()) >= 20
