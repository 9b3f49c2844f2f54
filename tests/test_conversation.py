"""A conversation's cache (mminfer.measures.conversation.measure): carried across turns against
recomputed, in both backends, on dense, MoE, LoRA and YaRN models."""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from conftest import TINY_MAX_POSITIONS
from knob_models import models_of_kind

from mminfer.errors import MminferError
from mminfer.measures.conversation import measure as conversation
from mminfer.measures.conversation.conversation import (
    Conversation,
    ConversationSettings,
    PrefixBreak,
)
from mminfer.measures.conversation.measure import (
    CACHE_COVERS_INPUT,
    RETURN_SEQUENCES_WITH_BATCH1_CACHE,
    common_prefix,
    generate_pitfalls,
    hold_conversation,
    measure_conversation,
    prefix_break,
    render_prompt,
    shared_prefix_users,
    time_turn,
    truncate_cache,
)
from mminfer.model.cachebytes import kv_formula_bytes
from mminfer.model.loading import ModelSpec, load_model, save_state_dict
from mminfer.model.tokenizer import load_tokenizer
from mminfer.model.twin import MiniMindConfig, MiniMindForCausalLM
from mminfer.records import FirstDifference, from_json, to_json
from mminfer.report.render import environment, rendering_context, unwrap
from mminfer.report.sections.conversation.conversation import (
    conversation_facts,
    conversation_serve_facts,
)
from mminfer.timing.ab import Rounds
from mminfer.workflow.inputs import read_schema

QUESTIONS = [
    "가람 마을의 특산물은 무엇인가요?",
    "나래 마을은 어디에 있나요?",
    "그 마을의 특산물은 무엇인가요?",
    "KV 캐시는 무엇을 저장하나요?",
]
NEW_TOKENS = 10


@pytest.fixture(scope="module")
def tiny_sft_loaded(load_tiny, tiny_sft_checkpoint):
    """The tiny SFT stand-in, builtin, float32 (shared: tests must not modify it)."""
    return load_tiny(path=tiny_sft_checkpoint)


@pytest.fixture(scope="module")
def tiny_sft_model(tiny_sft_loaded):
    return tiny_sft_loaded.model


def converse(model, tokenizer, questions=QUESTIONS, template=None, clock=None, **timing):
    """hold_conversation on the CPU with one timed round per turn unless told otherwise."""
    template = template or tokenizer.chat_template()[0]
    settings = settings_of(questions, **timing)
    return hold_conversation(model, tokenizer, template, settings, "cpu", TINY_MAX_POSITIONS, clock)


def settings_of(questions: list[str], users: int = 2, **timing) -> ConversationSettings:
    """The tiny model's conversation settings: one timed round a turn, users sharing 8 of 20."""
    small = {"new_tokens": NEW_TOKENS, "warmup": 0, "runs": 1, "max_runs": 1, "users": users}
    small |= {"shared_tokens": 8, "user_prompt_tokens": 20, "user_new_tokens": 4, "seed": 0}
    return ConversationSettings(questions=questions, **small | timing)


def measure(loaded, tokenizer, run, settings: ConversationSettings):
    """measure_conversation on the tiny tokenizer's own chat template."""
    template, source = tokenizer.chat_template()
    return measure_conversation(
        loaded=loaded,
        tokenizer=tokenizer,
        template=template,
        template_source=source,
        tokenizer_source="tiny",
        settings=settings,
        run=run,
    )


# --- tokens fed, reuse and the same answers -----------------------------------------------------


def test_the_turns_feed_the_formulas_reuse_a_growing_prefix_and_answer_alike(
    tiny_sft_model, tiny_tokenizer
):
    turns = converse(tiny_sft_model, tiny_tokenizer)
    assert len(turns) == 4 and turns[0].reused == 0 and turns[0].timing is None
    for turn in turns:
        assert turn.fed_match
        assert turn.fed_first_recompute == turn.prompt_len
        assert turn.fed_first_carry == turn.prompt_len - turn.reused
        assert turn.fed_recompute == turn.prompt_len + turn.new_tokens - 1
        assert turn.fed_carry == turn.prompt_len - turn.reused + turn.new_tokens_carry - 1
        assert turn.same_prompt and turn.same_ids and turn.close_logits  # float32: the same answers
        assert turn.first_difference is None
        assert turn.max_abs_logit_diff < 1e-4 * turn.max_abs_logit
    reused = [turn.reused for turn in turns]
    assert reused == sorted(set(reused))  # strictly growing
    for previous, turn in itertools.pairwise(turns):
        # the cache holds the previous prompt and answer but the answer's last token
        assert turn.held == previous.prompt_len + previous.new_tokens_carry - 1
        assert turn.saved_tokens == turn.reused
    # recompute prefills every turn again: its prompt tokens grow faster than carry's
    assert sum(t.prompt_len for t in turns) > 2 * sum(t.fed_first_carry for t in turns)


def wrong_positions(model):
    """Feed a carried turn's tokens at positions 0.. instead of from the cache's length.

    Every attention layer of either backend gets, when it is handed a cache and more than one new
    token (a carried prompt's rest), the rotary angles of positions 0 to t - 1.
    """
    tables = model.model

    def wrap(attention):
        original = attention.forward

        def forward(x, position_embeddings, past_key_value=None, *args, **kwargs):
            length = x.shape[1]
            if past_key_value is not None and length > 1:
                position_embeddings = (tables.freqs_cos[:length], tables.freqs_sin[:length])
            return original(x, position_embeddings, past_key_value, *args, **kwargs)

        attention.forward = forward

    for layer in model.model.layers:
        wrap(layer.self_attn)


@pytest.mark.parametrize("backend", ["builtin", "minimind"])
def test_positions_from_zero_make_the_same_answers_check_fail(
    backend, request, load_tiny, tiny_sft_checkpoint, tiny_tokenizer
):
    source = {}
    if backend == "minimind":
        source["minimind_src"] = str(request.getfixturevalue("minimind_src"))
    # its own copy: the test changes it
    model = load_tiny(backend=backend, path=tiny_sft_checkpoint, **source).model
    turns = converse(model, tiny_tokenizer)
    assert all(turn.same_ids and turn.close_logits for turn in turns)
    wrong_positions(model)
    turns = converse(model, tiny_tokenizer)
    assert not all(turn.same_ids and turn.close_logits for turn in turns)
    assert turns[1].max_abs_logit_diff > 1e-2  # the first carried turn already differs
    assert turns[0].same_ids and turns[0].max_abs_logit_diff == 0.0  # nothing carried yet


# --- a template that breaks the common prefix ---------------------------------------------------

# An assistant turn re-rendered with "A: " before the answer: the generated ids lack it.
PREFIXING_TEMPLATE = (
    "{% for message in messages %}"
    "{% if message['role'] == 'assistant' %}"
    "{{ '<|im_start|>assistant\\nA: ' + message['content'] + '<|im_end|>\\n' }}"
    "{% else %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
    "{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)


def test_a_template_that_rerenders_the_answer_breaks_the_prefix_where_the_answer_starts(
    tiny_sft_model, tiny_tokenizer
):
    turns = converse(tiny_sft_model, tiny_tokenizer, template=PREFIXING_TEMPLATE)
    for previous, turn in itertools.pairwise(turns):
        broke = turn.prefix_break
        assert broke is not None
        assert broke.reason == "template_text_differs"
        # held ids from the previous prompt on are its answer; the re-render says "A: " first
        assert broke.answer_offset == 0 and broke.position == previous.prompt_len
        assert broke.prompt_text.startswith("A")
        assert turn.reused == turn.common_prefix == broke.position
        assert turn.fed_match and turn.same_ids and turn.close_logits


def test_the_same_text_in_other_tokens_is_named(tiny_tokenizer):
    word = tiny_tokenizer.encode(" 마을")
    pieces = [i for part in (" ", "마", "을") for i in tiny_tokenizer.encode(part)]
    assert len(word) < len(pieces)  # the tokenizer merges the space and the syllables
    start = tiny_tokenizer.encode("가람")
    held = start + pieces
    prompt = start + word + tiny_tokenizer.encode("의 특산물")
    broke = prefix_break(tiny_tokenizer, held, prompt, 1, "마을")
    assert broke.position == len(start) == common_prefix(held, prompt)
    assert broke.reason == "same_text_other_tokens"
    assert broke.answer_offset == len(start) - 1
    assert (broke.held_token, broke.prompt_token) == (pieces[0], word[0])


@pytest.fixture(scope="module")
def minimind_tokenizer(shared_fixtures):
    return load_tokenizer(shared_fixtures)


def minimind3_break(tokenizer, answer: str | list[int], keep: int = 99):
    """The break after a first turn whose answer (text, or ids) was generated up to ``keep`` ids,
    held and re-rendered through minimind-3's chat template."""
    template, _ = tokenizer.chat_template()
    question = [{"role": "user", "content": QUESTIONS[0]}]
    prompt = render_prompt(tokenizer, template, question)
    if isinstance(answer, str):
        answer = tokenizer.encode(answer)
    ids = answer[:keep]
    content = tokenizer.decode(ids)
    history = question + [{"role": "assistant", "content": content}]
    follow_up = render_prompt(tokenizer, template, history + [{"role": "user", "content": "네"}])
    return prefix_break(tokenizer, prompt + ids, follow_up, len(prompt), content), len(prompt)


def test_minimind3s_template_strips_an_answers_leading_newlines(minimind_tokenizer):
    tokenizer = minimind_tokenizer
    broke, prompt_len = minimind3_break(tokenizer, "\n\n가람 마을의 특산물은 유자차입니다.", 99)
    assert broke.position == prompt_len and broke.answer_offset == 0
    assert broke.reason == "newlines_stripped"
    assert broke.held_text.startswith("\n\n") and broke.prompt_text.startswith("가람")
    assert broke.before_text.endswith("</think>\n\n")


def test_minimind3s_template_keeps_a_plain_answers_ids(minimind_tokenizer):
    assert minimind3_break(minimind_tokenizer, "가람 마을의 특산물은 유자차입니다.", 99)[0] is None


def test_an_answer_cut_inside_a_character_breaks_the_prefix_there(minimind_tokenizer):
    tokenizer = minimind_tokenizer
    ids = tokenizer.encode(" 유자차")  # byte-level: 3 ids a syllable, the last one cut
    broke, _ = minimind3_break(tokenizer, " 유자차", len(ids) - 1)
    assert broke.reason == "replacement_character"
    assert broke.answer_offset == len(ids) - 3  # where the cut character starts


def test_newlines_stripped_is_told_from_other_template_text():
    assert conversation.newlines_stripped("\n\n가람", "가람<|im_end|>")
    assert conversation.newlines_stripped("\n\n", "<|im_end|>\n")
    assert not conversation.newlines_stripped("\n\n", "A: \n\n<|im_end|>")
    assert not conversation.newlines_stripped("\n가람", "A: 가람")
    assert not conversation.newlines_stripped("가람", "가람")


def test_bytes_that_make_no_character_break_the_prefix_where_they_are(minimind_tokenizer):
    tokenizer = minimind_tokenizer
    first_byte = tokenizer.encode(" 유자차")[:1]  # a syllable's first byte, alone: no character
    answer = tokenizer.encode("가람") + first_byte + tokenizer.encode("마을")
    broke, _ = minimind3_break(tokenizer, answer)
    assert broke.reason == "replacement_character"
    assert broke.answer_offset == len(tokenizer.encode("가람"))


def test_a_held_cache_that_is_all_prefix_has_no_break(tiny_tokenizer):
    assert prefix_break(tiny_tokenizer, [5, 6], [5, 6, 7], 1, "") is None
    assert prefix_break(tiny_tokenizer, [], [5], 0, "") is None


def test_truncating_a_cache_keeps_its_first_positions_only():
    cache = [(torch.arange(12.0).view(1, 6, 1, 2), torch.ones(1, 6, 1, 2))]
    cut = truncate_cache(cache, 4)
    assert cut[0][0].shape == (1, 4, 1, 2) and torch.equal(cut[0][0], cache[0][0][:, :4])
    assert cache[0][0].shape == (1, 6, 1, 2)
    assert truncate_cache(cache, 0) is None


def test_a_conversation_past_the_models_positions_names_the_config_keys(
    tiny_sft_model, tiny_tokenizer
):
    long_question = "가람 마을의 특산물은 " * 200
    with pytest.raises(MminferError, match="conversation.questions.*conversation.new_tokens"):
        converse(tiny_sft_model, tiny_tokenizer, questions=[long_question, "네"])


# --- time to first token on a fake clock --------------------------------------------------------

SECONDS_PER_TOKEN = 0.001


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Ticking(torch.nn.Module):
    """A model whose every forward call advances a fake clock by the tokens it is fed."""

    def __init__(self, inner, clock: FakeClock):
        super().__init__()
        self.inner = inner
        self.clock = clock

    def forward(self, input_ids, *args, **kwargs):
        self.clock.now += SECONDS_PER_TOKEN * input_ids.shape[1]
        return self.inner.forward(input_ids, *args, **kwargs)

    def generate(self, *args, **kwargs):
        return type(self.inner).generate(self, *args, **kwargs)


def test_time_to_first_token_on_a_fake_clock_is_the_tokens_each_way_feeds(
    tiny_sft_model, tiny_tokenizer
):
    clock = FakeClock()
    model = Ticking(tiny_sft_model, clock)
    turns = converse(model, tiny_tokenizer, clock=clock, warmup=1, runs=3, max_runs=6)
    for turn in turns[1:]:
        timing = turn.timing
        assert timing.carry_s == pytest.approx(SECONDS_PER_TOKEN * (turn.prompt_len - turn.reused))
        assert timing.recompute_s == pytest.approx(SECONDS_PER_TOKEN * turn.prompt_len)
        assert timing.saved_s == pytest.approx(SECONDS_PER_TOKEN * turn.reused)
        # decided at the first look that can: 6 rounds at 95 % per look (3 to 6 rounds)
        assert timing.runs_done == 6 and timing.extra_rounds == 3
        assert len(timing.carry_warmup_s) == len(timing.recompute_warmup_s) == 1
        assert timing.verdict == "ok" and timing.doubts == []


def test_a_carry_that_is_not_faster_is_untrusted_after_the_extra_rounds(
    tiny_sft_model, tiny_tokenizer
):
    clock = FakeClock()
    prompt = tiny_tokenizer.encode("<|im_start|>user\n가람<|im_end|>\n<|im_start|>assistant\n")
    cache = tiny_sft_model(torch.tensor([prompt]), use_cache=True).past_key_values
    model = Ticking(tiny_sft_model, clock)

    def slow_cut(past_key_values, length):  # cutting the cache costs more than the prefill
        clock.now += 1.0
        return [(k[:, :length], v[:, :length]) for k, v in past_key_values]

    settings = conversation.chat_settings(tiny_tokenizer.eos_token_id)
    original = conversation.truncate_cache
    conversation.truncate_cache = slow_cut
    try:
        timing = time_turn(
            model=model,
            prompt_ids=prompt,
            carried=cache,
            reused=len(prompt) - 2,
            settings=settings,
            rounds=Rounds(warmup=1, runs=2, max_runs=5),
            device="cpu",
            clock=clock,
        )
    finally:
        conversation.truncate_cache = original
    assert timing.doubts == ["cache_not_faster"] and timing.verdict == "untrusted"
    assert timing.runs_done == 5 and timing.extra_rounds == 3
    assert timing.saved_s < 0


# --- a prompt many users share ------------------------------------------------------------------


def test_generate_copies_the_shared_prefix_into_every_users_row(tiny_sft_loaded):
    config = tiny_sft_loaded.config
    shared = shared_prefix_users(tiny_sft_loaded.model, config, 3, 8, 20, 5, 0, "cpu")
    assert shared.held_tokens == 20 + 5 - 1  # the last new token is never fed
    assert shared.k_shape == [3, 24, 2, 16]
    assert (
        shared.measured_bytes
        == shared.formula_bytes
        == kv_formula_bytes(
            layers=2, tokens=24, kv_heads=2, head_dim=16, bytes_per_element=4, batch=3
        )
    )
    assert shared.matches and shared.prefix_rows_identical
    assert shared.bytes_per_token == 2 * 2 * 2 * 16 * 4
    assert shared.copied_tokens == 3 * 24
    assert shared.shared_bound_tokens == 8 + 3 * (24 - 8)
    assert shared.copied_prefix_bytes == 2 * 8 * shared.bytes_per_token
    assert shared.users_shared_bound >= shared.users_copied > 0


def test_rows_whose_prefix_differs_are_not_called_copies():
    k = torch.zeros(3, 6, 2, 4)
    v = torch.zeros(3, 6, 2, 4)
    assert conversation.prefix_rows_identical([(k, v)], 4)
    v[2, 3, 0, 0] = 1.0  # inside the shared prefix of the last row
    assert not conversation.prefix_rows_identical([(k, v)], 4)
    assert conversation.prefix_rows_identical([(k, v)], 3)  # before it


@pytest.mark.parametrize("users, shared, prompt, key", [(0, 4, 8, "users"), (2, 8, 8, "shared")])
def test_shared_prefix_settings_name_their_key(tiny_sft_loaded, users, shared, prompt, key):
    with pytest.raises(MminferError, match=f"conversation.{key}"):
        shared_prefix_users(
            tiny_sft_loaded.model, tiny_sft_loaded.config, users, shared, prompt, 4, 0, "cpu"
        )


# --- the pitfalls -------------------------------------------------------------------------------


def test_the_pitfalls_are_caught_and_named(tiny_sft_model):
    pitfalls = generate_pitfalls(tiny_sft_model, [1, 40, 41, 42, 43, 44], "cpu")
    whole, rows = pitfalls
    assert whole.name == CACHE_COVERS_INPUT and whole.raised
    assert (whole.input_len, whole.cache_len) == (6, 6)
    assert whole.error_type == "RuntimeError" and "size of tensor" in whole.error_message
    assert rows.name == RETURN_SEQUENCES_WITH_BATCH1_CACHE and rows.raised
    assert (rows.cache_rows, rows.rows_asked, rows.cache_len) == (1, 2, 5)
    assert rows.error_type == "RuntimeError" and "Expected size 1 but got size 2" in (
        rows.error_message
    )


# --- the record ---------------------------------------------------------------------------------


def test_the_record_adds_up_and_reads_back(record):
    for turn in record.turns:  # every count against its formula, worked here
        assert turn.fed_recompute == turn.prompt_len + (turn.new_tokens - 1)
        carry_prompt = turn.prompt_len_carry - turn.reused
        assert turn.fed_carry == carry_prompt + (turn.new_tokens_carry - 1)
    assert record.total_fed_recompute == sum(t.prompt_len + t.new_tokens - 1 for t in record.turns)
    assert record.totals_match and record.same_answers and record.saved_grows
    assert record.total_saved_tokens == sum(t.reused for t in record.turns)
    assert record.prompt_tokens_recompute - record.prompt_tokens_carry == record.total_saved_tokens
    assert record.turns[0].timing is None  # nothing to reuse on the first turn, nothing timed
    verdicts = {turn.timing.verdict for turn in record.turns[1:]}
    for worst in ("untrusted", "noisy", "ok"):  # the conversation's verdict is its worst turn's
        if worst in verdicts:
            assert record.timing_verdict == worst
            break
    assert [p.name for p in record.pitfalls] == [
        CACHE_COVERS_INPUT,
        RETURN_SEQUENCES_WITH_BATCH1_CACHE,
    ]
    assert from_json(type(record), to_json(record)) == record


@pytest.mark.parametrize(
    "changes, key",
    [
        ({"questions": QUESTIONS[:1]}, "conversation.questions"),
        ({"users": 0}, "conversation.users"),
        ({"shared_tokens": 20}, "conversation.shared_tokens"),
        ({"user_new_tokens": 0}, "conversation.user_new_tokens"),
        ({"user_prompt_tokens": TINY_MAX_POSITIONS}, "conversation.user_prompt_tokens"),
    ],
)
def test_bad_shared_prefix_settings_stop_before_the_conversation(
    tiny_sft_loaded, tiny_tokenizer, tiny_run, monkeypatch, changes, key
):
    def held(*args, **kwargs):
        raise AssertionError("the conversation was held and timed before the settings' check")

    monkeypatch.setattr(conversation, "hold_conversation", held)
    with pytest.raises(MminferError, match=key):
        measure(
            tiny_sft_loaded,
            tiny_tokenizer,
            tiny_run,
            dataclasses.replace(settings_of(QUESTIONS), **changes),
        )


# --- both backends, every kind of model ---------------------------------------------------------


@pytest.mark.parametrize("name", ["dense", "moe", "lora", "yarn"])
def test_exact_in_both_backends_on_every_kind_of_model(
    name, tiny_tokenizer, minimind_src, tmp_path
):
    _, backends = models_of_kind(name, minimind_src, tmp_path)  # tests/knob_models.py
    records = []
    for model in backends:
        turns = converse(model, tiny_tokenizer, questions=QUESTIONS[:3])
        for turn in turns:
            assert turn.fed_match and turn.same_ids and turn.close_logits
        assert [turn.reused for turn in turns][1] > 0
        records.append((turns, generate_pitfalls(model, [1, 40, 41, 42, 43], "cpu")))
    (builtin_turns, builtin_pitfalls), (minimind_turns, minimind_pitfalls) = records
    for ours, theirs in zip(builtin_turns, minimind_turns):
        assert ours.ids == theirs.ids and ours.ids_carry == theirs.ids_carry
        assert ours.max_abs_logit_diff == theirs.max_abs_logit_diff  # bit for bit
        assert (ours.reused, ours.fed_carry) == (theirs.reused, theirs.fed_carry)
    for ours, theirs in zip(builtin_pitfalls, minimind_pitfalls):
        said = ("raised", "error_type", "error_message")
        assert [getattr(ours, key) for key in said] == [getattr(theirs, key) for key in said]


# --- the report's section and the picture --------------------------------------------------------

REPORT = Path(__file__).resolve().parents[1] / "mminfer" / "report" / "pages"


@pytest.fixture(scope="module")
def record(tiny_sft_loaded, tiny_tokenizer, tiny_run):
    """A conversation.json record of the tiny model, as the report reads it back."""
    measured = measure(tiny_sft_loaded, tiny_tokenizer, tiny_run, settings_of(QUESTIONS, users=3))
    return from_json(Conversation, json.loads(json.dumps(to_json(measured))))


def render(facts: dict, pictures=None, serve=None) -> str:
    """The section alone, its wrapped lines joined as Markdown reads them."""
    env = environment(REPORT)
    records = {"conversation": facts["record"], "serve": serve}
    context = rendering_context(records)
    template = env.get_template("conversation/conversation.md.j2")
    return unwrap(template.render(context, conversation=facts, pictures=pictures))


def test_the_section_states_the_measured_figures(record):
    facts = conversation_facts(record)
    text = render(facts, {"conversation": "conversation.png"})
    assert text.startswith("## 대화")
    assert "![턴마다 넣은 토큰과 첫 토큰까지 시간](conversation.png)" in text
    assert f"다시 계산 {record.total_fed_recompute:,}토큰" in text
    assert f"이어 쓰기 {record.total_fed_carry:,}토큰" in text
    assert "모든 턴에서 두 방법의 측정이 공식과 같다" in text
    assert "답은 모든 턴에서 다시 계산과 같았다(float32, cpu)" in text
    assert f"| {record.turns[1].turn} | {record.turns[1].prompt_len} |" in text
    assert "넘긴 캐시가 입력 전체를 덮을 때" in text and "RuntimeError" in text
    assert "오류로 멈췄다: `RuntimeError: " in text  # no particle after the quoted message
    last = record.turns[-1]
    assert facts["last_reused_share"] == last.reused / last.prompt_len_carry
    assert "캐시에서 다시 써 다시 계산하지 않았다." in text
    assert facts["shared_saving"] == record.shared_prefix.copied_tokens / (
        record.shared_prefix.shared_bound_tokens
    )
    assert "경계값" in text


def test_a_divergence_and_a_break_are_said_not_hidden(record):
    turn = record.turns[2]
    difference = FirstDifference(
        step=3,
        token_with_cache=11,
        token_without_cache=12,
        margin_with_cache=0.5,
        margin_without_cache=0.4,
        max_abs_logit_diff=2.0,
        max_abs_logit=8.0,
    )
    broken = dataclasses.replace(
        turn,
        same_ids=False,
        first_difference=difference,
        prefix_break=PrefixBreak(
            position=40,
            answer_offset=0,
            held_token=5,
            prompt_token=6,
            held_text="\n\n가람",
            prompt_text="가람<|im_end|>",
            before_text="</think>\n\n",
            reason="newlines_stripped",
        ),
    )
    turns = [*record.turns[:2], broken, *record.turns[3:]]
    facts = conversation_facts(dataclasses.replace(record, turns=turns))
    assert [row["turn"].turn for row in facts["diverged"]] == [3]
    assert facts["diverged"][0]["rounding_sized"] is False  # 2.0 > 1e-3 x (1 + 8)
    assert facts["breaks"][0]["held_text"] == "\\n\\n가람"  # newlines made visible
    text = render(facts)
    assert "**반올림으로 설명되지 않는 차이다" in text
    assert "`\\n\\n가람`" in text and "줄바꿈을 지웠다" in text


def test_serves_users_by_memory_stand_beside_the_shared_prefixs(record):
    from reportdata import serve_record

    serve = serve_record()
    alone = conversation_facts(record)
    assert alone["serve_users"] is None
    assert "serve.json" not in render(alone)
    facts = conversation_serve_facts(record, serve)
    assert facts["serve_users"] is serve.users
    shared = record.shared_prefix
    assert facts["same_context"] is False  # serve's context is not P + N here
    assert serve.users.context != shared.prompt_len + shared.new_tokens
    text = render(facts, serve=serve)
    assert f"메모리에 {serve.users.users_by_memory:,}명을" in text
    assert "컨텍스트가 달라" in text
    matching = dataclasses.replace(
        serve,
        users=dataclasses.replace(serve.users, context=shared.prompt_len + shared.new_tokens),
    )
    facts = conversation_serve_facts(record, matching)
    assert facts["same_context"] is True
    assert "바로 견줄 수 있다" in render(facts, serve=matching)


def test_a_pitfalls_lesson_follows_what_generate_did(record):
    raised = conversation_facts(record)["pitfalls"]
    assert [row["lesson"] for row in raised] == [
        f"{CACHE_COVERS_INPUT}:raised",
        f"{RETURN_SEQUENCES_WITH_BATCH1_CACHE}:raised",
    ]
    assert "넣을 토큰이 하나도 남지 않는다" in render(conversation_facts(record))
    returned = [
        dataclasses.replace(
            pitfall,
            raised=False,
            error_type=None,
            error_message=None,
            output_shape=[rows, pitfall.input_len + 1],
        )
        for pitfall, rows in zip(record.pitfalls, (1, 1))
    ]
    facts = conversation_facts(dataclasses.replace(record, pitfalls=returned))
    assert [row["lesson"] for row in facts["pitfalls"]] == [
        f"{CACHE_COVERS_INPUT}:returned",
        f"{RETURN_SEQUENCES_WITH_BATCH1_CACHE}:other_rows",  # 1 row of the 2 asked
    ]
    text = render(facts)
    assert "넣을 토큰이 하나도 남지 않는다" not in text  # the raised lesson is not printed
    assert "반복하지 않는다" not in text
    assert "오류 없이" in text and "다른 수의 행을 돌려줬다" in text


def test_mminfers_own_stop_inside_a_pitfall_is_raised(tiny_sft_model, monkeypatch):
    def stopped(*args, **kwargs):
        raise MminferError("the logits hold NaN")

    monkeypatch.setattr(tiny_sft_model, "generate", stopped)
    with pytest.raises(MminferError, match="NaN"):
        generate_pitfalls(tiny_sft_model, [1, 2, 3, 4], "cpu")


def test_the_comparison_says_the_records_same_answers(record):
    from reportdata import capacity_record, kv_record, temp_record, time_record, topp_record

    from mminfer.report.compare import comparison_row

    def row(conversation):
        records = (time_record(), kv_record(), temp_record(), topp_record(), capacity_record())
        return comparison_row("tiny", *records, conversation)

    assert record.same_answers and row(record)["conversation_same"] is True
    # the same ids with logits past rounding are not the same answers
    assert all(turn.same_ids for turn in record.turns)
    apart = dataclasses.replace(record, same_answers=False)
    assert row(apart)["conversation_same"] is False


def test_an_untrusted_timing_is_never_stated_as_fact():
    from reportdata import QUIET_TURNS, conversation_timed

    slower = [0.0030, 0.0031, 0.0032, 0.0030, 0.0031, 0.0032, 0.0031]  # carry, every round
    record = conversation_timed(QUIET_TURNS | {3: ([0.0024] * 7, slower)})
    facts = conversation_facts(record)
    assert facts["timing_untrusted"] and not facts["timing_trusted"]
    assert "턴 3에서 이어 쓰기가 다시 계산보다 느렸다" in render(facts)
    assert "이 시간들은 믿지 말 것" in render(facts)


# Reads every result file back as its record, renders the report (every section's facts, the
# conversation's among them) and imports the plot and comparison modules, then says whether torch
# was imported on the way.
READ_WITHOUT_TORCH = """
import sys
from pathlib import Path

from mminfer import measurements
from mminfer.report import compare
from mminfer.report import render as report

folder = Path(sys.argv[1])
records = {}
pictures = {}
for entry in measurements.MEASUREMENTS:
    records[entry.name] = measurements.read_result(folder / entry.filename)
    for picture in entry.pictures:
        pictures[picture.name] = f"{picture.name}.png"
        measurements.resolve(picture.draw)  # every section's plot module
text = report.render_reports(records, pictures, "cache.py")["beyond.md"]
assert "## 대화" in text, "the conversation's section is missing"
print("torch" in sys.modules)
"""


def test_the_report_reads_and_renders_every_record_without_torch(record, tmp_path):
    from reportdata import every_record

    from mminfer.measurements import MEASUREMENTS
    from mminfer.records import write_record

    records = every_record(conversation=record)
    for entry in MEASUREMENTS:
        write_record(tmp_path / entry.filename, records[entry.name])
    root = Path(__file__).resolve().parents[1]
    environment_variables = dict(os.environ, PYTHONPATH=str(root))
    done = subprocess.run(
        [sys.executable, "-c", READ_WITHOUT_TORCH, str(tmp_path)],
        capture_output=True,
        text=True,
        env=environment_variables,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"  # torch was not imported


# --- the course's shape and minimind-3's, with MiniMind's tokenizer (opt-in: a minute of CPU) ----

SHAPES = {
    "course": {
        "hidden_size": 256,
        "num_hidden_layers": 4,
        "num_attention_heads": 8,
        "num_key_value_heads": 2,
    },
    "minimind-3": {"hidden_size": 768, "num_hidden_layers": 8},
}


@pytest.mark.skipif(
    not os.environ.get("MMINFER_RELEASED_SHAPES"),
    reason="a minute of CPU: MMINFER_RELEASED_SHAPES=1 MMINFER_MINIMIND_SRC=... pytest "
    "tests/test_conversation.py -k released",
)
@pytest.mark.parametrize("shape", list(SHAPES))
def test_released_shapes_carry_exactly_in_both_backends(
    shape, shared_fixtures, minimind_src, tmp_path
):
    tokenizer = load_tokenizer(shared_fixtures)
    template, _ = tokenizer.chat_template()
    torch.manual_seed(0)
    path = tmp_path / f"{shape}.pth"
    save_state_dict(MiniMindForCausalLM(MiniMindConfig(**SHAPES[shape])), path)  # vocab 6400
    questions = read_schema()["properties"]["conversation"]["properties"]["questions"]["default"]
    turns = {}
    for backend in ("builtin", "minimind"):
        spec = ModelSpec(backend=backend, minimind_src=str(minimind_src))
        model = load_model(path, spec).model
        turns[backend] = hold_conversation(
            model,
            tokenizer,
            template,
            dataclasses.replace(settings_of(questions), new_tokens=24),
            "cpu",
            32768,
        )
    for ours, theirs in zip(turns["builtin"], turns["minimind"]):
        assert ours.fed_match and ours.same_ids and ours.close_logits
        assert (ours.ids, ours.reused, ours.prefix_break) == (
            theirs.ids,
            theirs.reused,
            theirs.prefix_break,
        )
        assert ours.max_abs_logit_diff == theirs.max_abs_logit_diff
    reused = [turn.reused for turn in turns["builtin"]]
    assert len(reused) >= 3 and reused == sorted(set(reused))
