"""The tokenizer without transformers: MiniMind's real tokenizer (from ../shared/fixtures, skipped
when absent), its chat template, and the small demo tokenizer's error handling."""

from __future__ import annotations

import importlib.util
import json
import shutil

import pytest

from mminfer.errors import MminferError, input_source
from mminfer.model.prompts import chat_prompt, prefix_prompt
from mminfer.model.tokenizer import (
    CHATML_TEMPLATE,
    check_vocab_fits,
    load_tokenizer,
    render_chat_template,
)

QUESTION = "가람 마을의 특산물은 무엇인가요?"


def vocab_fits(tokenizer, rows: int, checkpoint: str, key: str, model_set: str = "custom"):
    """check_vocab_fits with each input named as a job names it (mminfer.errors.input_source)."""
    check_vocab_fits(
        tokenizer,
        rows,
        input_source(model_set, "tokenizer", tokenizer.folder),
        input_source(model_set, key, checkpoint),
    )


# MiniMind's chat_template for one user message with add_generation_prompt=True (thinking closed):
EXPECTED_CHAT_TEXT = (
    "<|im_start|>user\n가람 마을의 특산물은 무엇인가요?<|im_end|>\n"
    "<|im_start|>assistant\n<think>\n\n</think>\n\n"
)


@pytest.fixture(scope="module")
def minimind_tokenizer(shared_fixtures):
    return load_tokenizer(shared_fixtures)


@pytest.fixture(scope="module")
def hf_tokenizer(shared_fixtures):
    if importlib.util.find_spec("transformers") is None:
        pytest.skip("transformers is not installed")
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(shared_fixtures))


# --- MiniMind's real tokenizer --------------------------------------------------------------------


def test_chat_prompt_is_minimind_template_for_one_user_message(minimind_tokenizer):
    tokenizer = minimind_tokenizer
    assert (tokenizer.bos_token_id, tokenizer.eos_token_id, tokenizer.vocab_size) == (1, 2, 6400)
    question = [{"role": "user", "content": QUESTION}]
    assert tokenizer.chat_prompt(question, add_generation_prompt=True) == EXPECTED_CHAT_TEXT
    ids, _ = chat_prompt(tokenizer, QUESTION)
    assert ids == tokenizer.encode(EXPECTED_CHAT_TEXT)
    assert ids[0] == 1  # '<|im_start|>' written in the text becomes the special token
    assert ids.count(2) == 1  # one '<|im_end|>'
    text = tokenizer.chat_prompt(question, add_generation_prompt=False)
    assert text == "<|im_start|>user\n" + QUESTION + "<|im_end|>\n"  # no assistant turn


@pytest.mark.parametrize(
    "text", [QUESTION, "민수는", "가람 마을의 특산물은 쌀입니다. 민수는 학교에 갑니다."]
)
def test_korean_text_round_trips(minimind_tokenizer, text):
    assert minimind_tokenizer.decode(minimind_tokenizer.encode(text)) == text


def test_prefix_prompt_is_bos_then_text_tokens(minimind_tokenizer):
    ids = prefix_prompt(minimind_tokenizer, "민수는")
    assert ids[0] == 1
    assert ids[1:] == minimind_tokenizer.encode("민수는")
    assert minimind_tokenizer.decode(ids[1:]) == "민수는"


@pytest.mark.parametrize(
    "messages",
    [
        [{"role": "user", "content": QUESTION}],
        [
            {"role": "system", "content": "너는 친절한 도우미야."},
            {"role": "user", "content": "안녕?"},
            {"role": "assistant", "content": "안녕하세요!"},
            {"role": "user", "content": QUESTION},
        ],
    ],
)
def test_chat_text_equals_transformers_apply_chat_template(
    minimind_tokenizer, hf_tokenizer, messages
):
    expected = hf_tokenizer.apply_chat_template(
        messages, tokenize=False, add_generation_prompt=True
    )
    assert minimind_tokenizer.chat_prompt(messages, add_generation_prompt=True) == expected


def test_chat_prompt_ids_equal_transformers_ids(minimind_tokenizer, hf_tokenizer):
    text = hf_tokenizer.apply_chat_template(
        [{"role": "user", "content": QUESTION}], tokenize=False, add_generation_prompt=True
    )
    ids = hf_tokenizer(text, add_special_tokens=False)["input_ids"]
    assert chat_prompt(minimind_tokenizer, QUESTION)[0] == ids
    assert (hf_tokenizer.bos_token_id, hf_tokenizer.eos_token_id) == (1, 2)


# --- the demo tokenizer and error handling --------------------------------------------------------


def test_demo_tokenizer_chat_text_is_chatml(tiny_tokenizer):
    assert (tiny_tokenizer.bos_token_id, tiny_tokenizer.eos_token_id) == (1, 2)
    assert tiny_tokenizer.vocab_size == 600
    text = tiny_tokenizer.chat_prompt(
        [{"role": "user", "content": "질문"}], add_generation_prompt=True
    )
    assert text == "<|im_start|>user\n질문<|im_end|>\n<|im_start|>assistant\n"


def test_decode_skips_special_tokens_unless_asked(tiny_tokenizer):
    ids = tiny_tokenizer.encode("<|im_start|>가람<|im_end|>")
    assert ids[0] == 1 and ids[-1] == 2
    assert tiny_tokenizer.decode(ids) == "가람"
    assert tiny_tokenizer.decode(ids, skip_special_tokens=False) == "<|im_start|>가람<|im_end|>"


def copied(tiny_tokenizer_dir, folder, change=None, text=None):
    """A copy of the tiny tokenizer whose tokenizer_config.json is changed by ``change`` (or is
    ``text``)."""
    shutil.copytree(tiny_tokenizer_dir, folder)
    path = folder / "tokenizer_config.json"
    if change is not None:
        config = json.loads(path.read_text(encoding="utf-8"))
        change(config)
        text = json.dumps(config)
    if text is not None:
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return folder


@pytest.fixture
def tokenizer_without_template(tiny_tokenizer_dir, tmp_path):
    folder = copied(
        tiny_tokenizer_dir, tmp_path / "tok", lambda config: config.pop("chat_template")
    )
    return load_tokenizer(folder)


def test_config_without_chat_template_stops_naming_the_file(tokenizer_without_template):
    with pytest.raises(MminferError, match="has no chat_template") as info:
        chat_prompt(tokenizer_without_template, "q")
    assert str(tokenizer_without_template.folder / "tokenizer_config.json") in str(info.value)
    assert "temp.chatml_fallback" in str(info.value)


def test_config_without_chat_template_falls_back_to_chatml_when_asked(
    tokenizer_without_template, tiny_tokenizer
):
    ids, source = chat_prompt(tokenizer_without_template, "q", chatml_fallback=True)
    text = tokenizer_without_template.decode(ids, skip_special_tokens=False)
    assert text == "<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\n"
    assert source == "plain ChatML (config key temp.chatml_fallback)"
    _, source = chat_prompt(tiny_tokenizer, "q", chatml_fallback=True)
    assert source == "tokenizer_config.json"  # the fallback is only for a tokenizer without one


def test_special_tokens_written_as_objects_are_read(tiny_tokenizer_dir, tmp_path):
    eos = {"content": "<|im_end|>", "special": True}
    folder = copied(
        tiny_tokenizer_dir, tmp_path / "tok", lambda config: config.update(eos_token=eos)
    )
    assert load_tokenizer(folder).eos_token_id == 2


def test_missing_tokenizer_file_is_an_error(tiny_tokenizer_dir, tmp_path):
    folder = tmp_path / "tok"
    folder.mkdir()
    shutil.copy(tiny_tokenizer_dir / "tokenizer_config.json", folder)
    with pytest.raises(MminferError, match="has no tokenizer.json"):
        load_tokenizer(folder)


@pytest.mark.parametrize(
    "change, text, said",
    [
        (
            lambda config: config.update(bos_token="<s>"),
            None,
            "bos_token '<s>' is not in tokenizer.json",
        ),
        (None, "{not json", "tokenizer_config.json is not valid JSON"),
        (None, b'{"bos_token": "\xff"}', "tokenizer_config.json is not valid JSON"),  # not UTF-8
    ],
)
def test_a_bad_tokenizer_config_is_an_error(tiny_tokenizer_dir, tmp_path, change, text, said):
    folder = copied(tiny_tokenizer_dir, tmp_path / "tok", change, text)
    with pytest.raises(MminferError, match=said):
        load_tokenizer(folder)


# --- tokenizer against the checkpoint's embedding -------------------------------------------------


def test_the_demos_inputs_are_named_by_demo_dir(tiny_tokenizer):
    rows = tiny_tokenizer.id_count - 1
    with pytest.raises(
        MminferError, match="the demo's tokenizer, built under config key 'demo_dir'"
    ):
        vocab_fits(tiny_tokenizer, rows, "/demo/pretrain.pth", "pretrain", "demo")


def test_tokenizer_with_more_ids_than_embedding_rows_names_both_keys_and_sizes(tiny_tokenizer):
    rows = tiny_tokenizer.id_count - 100
    with pytest.raises(MminferError) as info:
        vocab_fits(tiny_tokenizer, rows, "/ckpt/sft.pth", "sft", "course")
    message = str(info.value)
    assert "config key 'tokenizer'" in message and "config key 'sft'" in message
    assert f"{tiny_tokenizer.id_count} token ids" in message and f"{rows} rows" in message
    assert str(tiny_tokenizer.folder) in message and "/ckpt/sft.pth" in message
    vocab_fits(tiny_tokenizer, tiny_tokenizer.id_count, "p.pth", "pretrain", "course")
    vocab_fits(tiny_tokenizer, tiny_tokenizer.id_count + 64, "p.pth", "pretrain", "course")  # pad


def test_vocab_mismatch_of_an_extra_model_names_its_keys(tiny_tokenizer):
    with pytest.raises(MminferError) as info:
        vocab_fits(tiny_tokenizer, 10, "p.pth", "pretrain", "small")
    assert "config key 'models.small.pretrain'" in str(info.value)
    assert "config key 'models.small.tokenizer' (default: 'tokenizer')" in str(info.value)


def test_tokenizer_id_count_counts_added_tokens(tiny_tokenizer_dir, tmp_path):
    from tokenizers import Tokenizer as HFTokenizer

    folder = copied(tiny_tokenizer_dir, tmp_path / "tok")
    backend = HFTokenizer.from_file(str(folder / "tokenizer.json"))
    before = load_tokenizer(folder).id_count
    backend.add_tokens([f"<extra_{i}>" for i in range(5)])
    backend.save(str(folder / "tokenizer.json"))
    assert load_tokenizer(folder).id_count == before + 5


def test_template_raise_exception_becomes_mminfer_error():
    template = "{{ raise_exception('only user turns') }}"
    with pytest.raises(MminferError, match="only user turns"):
        render_chat_template(template, [{"role": "user", "content": "q"}])


def test_chatml_template_renders_every_turn():
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
    assert render_chat_template(CHATML_TEMPLATE, messages, add_generation_prompt=False) == (
        "<|im_start|>system\ns<|im_end|>\n<|im_start|>user\nu<|im_end|>\n"
    )
