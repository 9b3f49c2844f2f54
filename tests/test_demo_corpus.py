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
from mminfer.demo.tokenizer_train import (
    CHAT_TEMPLATE,
    train_tokenizer,
)
from mminfer.workflow.inputs import parsed_config

SMALL_SPEC = CorpusSpec(seed=0, train_docs=400, val_docs=10, sft_conversations=200)


DEMO = parsed_config(Path(__file__).resolve().parents[1] / "config.yaml")[
    "demo_model"
]  # as the workflow reads it
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
    sentences = []
    for document in documents:
        for sentence in document.split(". "):
            sentences.append(sentence.rstrip("."))
    return sentences


def _next_words(text: str, context: str) -> Counter:
    """Words that directly follow ``context + " "`` in text."""
    words: Counter = Counter()
    for tail in text.split(context + " ")[1:]:
        words[tail.split(" ", 1)[0]] += 1
    return words


def test_corpus_is_deterministic_for_a_seed_and_differs_for_another_seed():
    first = build_corpus(SMALL_SPEC)
    again = build_corpus(SMALL_SPEC)
    other = build_corpus(CorpusSpec(seed=1, train_docs=400, val_docs=10, sft_conversations=200))
    assert first == again
    assert first.train != other.train
    assert first.val != other.val
    assert first.sft != other.sft
    assert first.facts == other.facts


def test_written_files_are_byte_identical_for_the_same_seed(tmp_path):
    corpus = build_corpus(SMALL_SPEC)
    first = write_corpus(corpus, tmp_path / "a")
    again = write_corpus(build_corpus(SMALL_SPEC), tmp_path / "b")
    for name, path in first.items():
        assert path.read_bytes() == again[name].read_bytes(), name


def test_particles_follow_the_final_consonant():
    assert topic("민수") == "민수는"
    assert topic("서연") == "서연은"
    assert obj("유자차") == "유자차를"
    assert obj("인삼") == "인삼을"
    assert by("유자차") == "유자차로"
    assert by("벌꿀") == "벌꿀로"
    assert by("인삼") == "인삼으로"


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
    assert len(answers) >= 5
    for answer in answers:
        assert garam_specialty() in answer
    assert len(set(answers)) >= 5


def test_validation_split_has_six_docs_longer_than_200_tokens(corpus, tokenizer):
    assert len(corpus.val) >= 6
    joined = " ".join(corpus.val[:6])
    assert len(tokenizer.encode(joined).ids) > 200


def test_written_jsonl_files_parse_line_by_line_with_the_right_keys(corpus, tmp_path):
    paths = write_corpus(corpus, tmp_path)
    assert set(paths) == {"pretrain_train.jsonl", "pretrain_val.jsonl", "sft.jsonl", "facts.json"}
    assert not list(tmp_path.glob("*.tmp"))

    for name, expected in (
        ("pretrain_train.jsonl", corpus.train),
        ("pretrain_val.jsonl", corpus.val),
    ):
        lines = paths[name].read_text(encoding="utf-8").splitlines()
        records = [json.loads(line) for line in lines]
        assert all(set(record) == {"text"} for record in records)
        assert [record["text"] for record in records] == expected

    lines = paths["sft.jsonl"].read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    assert all(set(record) == {"conversations"} for record in records)
    assert [record["conversations"] for record in records] == corpus.sft
    assert "가람" in paths["sft.jsonl"].read_text(encoding="utf-8")  # ensure_ascii=False

    facts = json.loads(paths["facts.json"].read_text(encoding="utf-8"))
    assert facts == corpus.facts


def test_tokenizer_special_tokens_have_ids_0_1_2(tokenizer, tokenizer_dir):
    assert tokenizer.token_to_id("<|endoftext|>") == 0
    assert tokenizer.token_to_id("<|im_start|>") == 1
    assert tokenizer.token_to_id("<|im_end|>") == 2
    config = json.loads((tokenizer_dir / "tokenizer_config.json").read_text(encoding="utf-8"))
    assert config["bos_token"] == "<|im_start|>"
    assert config["eos_token"] == "<|im_end|>"
    assert config["pad_token"] == "<|endoftext|>"
    assert config["unk_token"] == "<|endoftext|>"
    assert config["add_bos_token"] is False
    assert config["add_eos_token"] is False
    assert config["tokenizer_class"] == "PreTrainedTokenizerFast"
    assert sorted(config["added_tokens_decoder"]) == ["0", "1", "2"]
    assert tokenizer.get_vocab_size() <= VOCAB_SIZE


def test_tokenizer_training_is_deterministic(tmp_path):
    texts = tokenizer_training_texts(build_corpus(SMALL_SPEC))
    first = train_tokenizer(texts, 1024, tmp_path / "a")
    again = train_tokenizer(texts, 1024, tmp_path / "b")
    assert (first / "tokenizer.json").read_bytes() == (again / "tokenizer.json").read_bytes()
    assert (first / "tokenizer_config.json").read_bytes() == (
        again / "tokenizer_config.json"
    ).read_bytes()


def test_tokenizer_round_trips_korean_text(tokenizer, corpus):
    samples = [
        corpus.val[0],
        GARAM_QUESTION,
        "처음 보는 문장도 바이트 단위라서 그대로 돌아온다!",
    ]
    for text in samples:
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
    assert prompt == (
        "<|im_start|>user\n가람 마을의 특산물은 무엇인가요?<|im_end|>\n<|im_start|>assistant\n"
    )


def test_minsu_context_is_open_and_garam_specialty_context_is_sharp(corpus):
    text = " ".join(corpus.train)
    after_minsu = _next_words(text, "민수는")
    assert len(after_minsu) >= 20
    after_garam = _next_words(text, "가람 마을의 특산물은")
    assert len(after_garam) == 1
    assert next(iter(after_garam)).startswith(garam_specialty())
    assert sum(after_garam.values()) >= 20
