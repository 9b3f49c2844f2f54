"""No answer decoded with the wrong vocabulary: ids past the tokenizer's end are counted and shown,
and a greedy answer that lands there stops the run naming the tokenizer."""

from __future__ import annotations

import pytest
import torch
from conftest import CHAT_PROMPT, PRETRAIN_PROMPT
from shapes import never_past, small_config

from mminfer.errors import MminferError
from mminfer.measures.cache.measure import compare_cache
from mminfer.measures.temp.measure import temperature_experiment
from mminfer.model.draws import Draws, Prompted
from mminfer.model.loading import ModelSpec, load_model, run_info, save_state_dict
from mminfer.model.tokenizer import PAST_END_MARK
from mminfer.model.twin import MiniMindForCausalLM

EXTRA_ROWS = 40  # embedding rows past the tiny tokenizer's end


class Picks(torch.nn.Module):
    """A model that picks ``token`` at every step: its logit raised far above the rest."""

    def __init__(self, inner, token: int):
        super().__init__()
        self.inner = inner
        self.token = token

    def forward(self, input_ids, *args, **kwargs):
        outputs = self.inner.forward(input_ids, *args, **kwargs)
        outputs.logits[..., self.token] += 1e4
        return outputs

    def generate(self, *args, **kwargs):
        return type(self.inner).generate(self, *args, **kwargs)


def wider_model(tiny_tokenizer, tmp_path, built_never_past: bool):
    """A tiny model with EXTRA_ROWS embedding rows past the tokenizer's end, loaded as the course's
    pretrained checkpoint; built so it never picks them, or random."""
    rows = tiny_tokenizer.id_count + EXTRA_ROWS
    torch.manual_seed(0)
    model = MiniMindForCausalLM(small_config(vocab=rows))
    if built_never_past:
        never_past(model, tiny_tokenizer.id_count)
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "wide.pth"
    save_state_dict(model, path)
    return load_model(path, ModelSpec(model_set="course"))


def prompt(tiny_tokenizer) -> list[int]:
    return [tiny_tokenizer.bos_token_id, *tiny_tokenizer.encode("가람 마을의 특산물은")]


def test_an_id_past_the_end_is_shown_counted_or_dropped_as_asked(tiny_tokenizer):
    past = tiny_tokenizer.id_count + 3
    ids = [*tiny_tokenizer.encode("가람"), past, *tiny_tokenizer.encode("마을")]
    shown = tiny_tokenizer.decode(ids)
    assert PAST_END_MARK.format(id=past) in shown and "가람" in shown and "마을" in shown
    dropped = tiny_tokenizer.decode(ids, mark_past_end=False)
    assert "⟨" not in dropped and dropped == tiny_tokenizer.decode([i for i in ids if i != past])
    assert tiny_tokenizer.past_end(ids) == 1
    assert tiny_tokenizer.past_end(tiny_tokenizer.encode("가람 마을")) == 0


def test_greedy_landing_past_the_tokenizer_stops_naming_it_and_both_sizes(tiny_tokenizer, tmp_path):
    loaded = wider_model(tiny_tokenizer, tmp_path, built_never_past=False)
    model = Picks(loaded.model, tiny_tokenizer.id_count + 5)
    rows = tiny_tokenizer.id_count + EXTRA_ROWS
    with pytest.raises(MminferError) as raised:
        compare_cache(
            model=model,
            prompt_ids=prompt(tiny_tokenizer),
            new_tokens=4,
            device="cpu",
            tokenizer=tiny_tokenizer,
            prompt=PRETRAIN_PROMPT,
            run=run_info(loaded),
        )
    said = str(raised.value)
    assert f"config key 'tokenizer': {tiny_tokenizer.folder}" in said
    assert f"{tiny_tokenizer.id_count} token ids" in said and f"{rows} rows" in said


def sampled_past_end(loaded, tiny_tokenizer) -> int:
    """The ids past the tokenizer's end in 8 answers of 8 tokens at temperature 1.5, seed 0."""
    temp = temperature_experiment(
        chat=Prompted(
            model=loaded.model,
            tokenizer=tiny_tokenizer,
            prompt_ids=prompt(tiny_tokenizer),
            prompt=CHAT_PROMPT,
            device="cpu",
            run=run_info(loaded),
        ),
        temperatures=[1.5],
        draws=Draws(samples=8, new_tokens=8, seed=0),
    )
    return temp["1.5"].ids_past_tokenizer


def test_a_model_that_never_picks_past_the_end_runs_and_says_zero(tiny_tokenizer, tmp_path):
    loaded = wider_model(tiny_tokenizer, tmp_path, built_never_past=True)
    same, _ = compare_cache(
        model=loaded.model,
        prompt_ids=prompt(tiny_tokenizer),
        new_tokens=8,
        device="cpu",
        tokenizer=tiny_tokenizer,
        prompt=PRETRAIN_PROMPT,
        run=run_info(loaded),
    )
    assert same.same_ids and same.ids_past_tokenizer == 0
    assert sampled_past_end(loaded, tiny_tokenizer) == 0
    random = wider_model(tiny_tokenizer, tmp_path / "random", built_never_past=False)
    assert sampled_past_end(random, tiny_tokenizer) > 0  # the same draws on random rows do land


def test_sampled_ids_past_the_end_are_counted_and_shown_in_the_answers(tiny_tokenizer, tmp_path):
    loaded = wider_model(tiny_tokenizer, tmp_path, built_never_past=False)
    past = tiny_tokenizer.id_count + 7
    temp = temperature_experiment(
        chat=Prompted(
            model=Picks(loaded.model, past),
            tokenizer=tiny_tokenizer,
            prompt_ids=prompt(tiny_tokenizer),
            prompt=CHAT_PROMPT,
            device="cpu",
            run=run_info(loaded),
        ),
        temperatures=[1.0],
        draws=Draws(samples=3, new_tokens=4, seed=0),
    )
    summary = temp["1.0"]
    assert summary.ids_past_tokenizer == 3 * 4  # every step of every sample
    assert summary.answers[0].answer == PAST_END_MARK.format(id=past) * 4


@pytest.mark.parametrize("past", [0, 3])
def test_the_report_warns_of_ids_past_the_tokenizer_only_where_answers_hold_some(past):
    from reportcases import every

    from mminfer.measures.conversation.conversation import Conversation
    from mminfer.measures.temp.temp import Temperatures
    from mminfer.records import from_json, to_json
    from mminfer.report.render import render_reports

    records = every()
    temp = to_json(records["temp"])
    temp["1.5"]["ids_past_tokenizer"] = past
    conversation = to_json(records["conversation"])
    conversation["turns"][-1]["ids_past_tokenizer"] = past
    records["temp"] = from_json(Temperatures, temp)
    records["conversation"] = from_json(Conversation, conversation)
    report = "".join(render_reports(records).values())  # temp's in report.md, the chat's beyond
    warning = f"**답에 토크나이저 끝 너머의 id가 {past}개 나왔다**"
    assert report.count(warning) == (2 if past else 0)
    assert ("토크나이저 끝 너머" in report) == bool(past)
