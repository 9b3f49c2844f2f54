"""topk.json (mminfer.measures.topk.measure): step 5 and 6 with generate's default top_k left on;
top_k=0 would be temp.json's own draws; the probability cut; top-k before top-p; a top_k the
vocabulary lacks names its key; the section says what its record says."""

from __future__ import annotations

import pytest
import torch
from conftest import CHAT_PROMPT
from reportdata import render_every, temp_record, topk_record

from mminfer.errors import MminferError
from mminfer.measures.temp.measure import temperature_draws
from mminfer.measures.topk.decide import cap_reached
from mminfer.measures.topk.measure import (
    TopKSettings,
    cut_by_top_k,
    draws_with_top_k,
    measure_topk,
    survivors_after_top_k,
    top_k_mass,
)
from mminfer.model.draws import Draws, Prompted, Sampler
from mminfer.model.loading import run_info
from mminfer.model.prompts import chat_prompt
from mminfer.report.sections.topk.joins import (
    counts_against_temp,
    mass_against_topp,
    survivors_against_topp,
)
from mminfer.report.sections.topk.topk import topk_temp_topp_facts


def measured(model, tokenizer, run, top_k=50):
    prompt_ids, _ = chat_prompt(tokenizer, CHAT_PROMPT.question)
    return measure_topk(
        sft=Prompted(model, tokenizer, prompt_ids, CHAT_PROMPT, "cpu", run),
        pretrain_model=model,
        topp_run=run,
        draws=Draws(samples=10, new_tokens=8, seed=0),
        settings=TopKSettings(
            CHAT_PROMPT.question, False, [0.3, 1.0, 1.5], top_k, "민수는", [0.5, 0.9, 0.99]
        ),
    )


def test_top_k_off_draws_exactly_temps_answers(tiny_model, tiny_tokenizer):
    """With top_k=0 the draws are temp.json's: only the top_k argument differs."""
    prompt_ids, _ = chat_prompt(tiny_tokenizer, CHAT_PROMPT.question)
    eos = tiny_tokenizer.eos_token_id
    rows, _ = draws_with_top_k(
        model=tiny_model,
        prompt_ids=prompt_ids,
        sampler=Sampler(temperature=1.0, top_k=0),
        draws=Draws(samples=10, new_tokens=8, seed=0),
        eos_token_id=eos,
        device="cpu",
    )
    expected = temperature_draws(
        model=tiny_model,
        tokenizer=tiny_tokenizer,
        prompt_ids=prompt_ids,
        temperatures=[1.0],
        draws=Draws(samples=10, new_tokens=8, seed=0),
        device="cpu",
    )
    assert rows == expected[1.0]


def test_the_cut_is_the_probability_below_the_kth_logit():
    logits = torch.tensor([[2.0, 1.0, 0.0, -1.0]])
    probs = torch.softmax(logits.double(), dim=-1)[0]
    assert cut_by_top_k(logits, 2).item() == pytest.approx(float(probs[2] + probs[3]))
    assert cut_by_top_k(logits, 4).item() == pytest.approx(0.0)


def test_top_k_runs_before_top_p_and_keeps_ties():
    logits = torch.tensor([3.0, 1.0, 1.0, 1.0, -5.0])
    survivors = survivors_after_top_k(logits, 2, [0.5, 0.999])
    assert survivors == {"0.5": 1, "0.999": 4}  # the k-th logit's ties survive top-k


def test_the_top_k_mass_is_what_top_k_keeps_at_temperature_one():
    logits = torch.tensor([0.5, 0.3, 0.15, 0.05]).log()
    assert top_k_mass(logits, 2) == pytest.approx(0.8)
    tied = torch.tensor([0.4, 0.2, 0.2, 0.2]).log()
    assert top_k_mass(tied, 2) == pytest.approx(1.0)  # the k-th logit's ties are kept


def test_the_first_tokens_cut_is_every_samples_and_counts_add_up(
    tiny_model, tiny_tokenizer, tiny_run
):
    record = measured(tiny_model, tiny_tokenizer, tiny_run)
    for summary in record.temp.values():
        assert summary.samples == 10 and 1 <= summary.distinct <= 10
        assert 0.0 <= summary.cut_first <= 1.0 and 0.0 <= summary.cut_mean <= 1.0
        assert sum(answer.count for answer in summary.answers) == 10
    cut = [summary.cut_first for summary in record.temp.values()]
    assert cut == sorted(cut)  # a hotter distribution leaves more below the k-th logit
    assert record.top_k_survivors >= 50 and max(record.topp.values()) <= record.top_k_survivors
    assert 0.0 < record.top_k_mass <= 1.0


def test_a_top_k_past_the_vocabulary_names_its_key(tiny_model, tiny_tokenizer, tiny_run):
    with pytest.raises(MminferError, match="topk.top_k"):
        measured(tiny_model, tiny_tokenizer, tiny_run, top_k=10**6)


def test_the_counts_moved_only_where_a_temperature_s_count_differs_from_temp_json():
    same = render_every(topk=topk_record(distinct=(10, 24, 29)))
    assert "temp.json과 같았다" in same and "요구하는 까닭" not in same
    assert topk_temp_topp_facts(topk_record(), temp_record())["counts_moved"]
    temp = temp_record()
    assert counts_against_temp(topk_record(), temp) == "moved"
    assert counts_against_temp(topk_record(distinct=(10, 24, 29)), temp) == "same"
    alone = dict([*temp.items()][:1])
    assert counts_against_temp(topk_record(distinct=(10, 24, 29)), alone) == "alone"
    assert counts_against_temp(topk_record(), None) == "alone"


def test_fewer_survive_at_every_p_and_the_renormalised_mass_says_why():
    text = render_every(
        topk=topk_record(topp=(15, 39, 49)), topp={"0.5": 21, "0.9": 72, "0.99": 111}
    )
    assert "모든 p에서 top-p만 쓸 때보다 적게 남았다(15/39/49 대 21/72/111)" in text
    assert "상위 50개가 가진 확률은 80.2%" in text and "적게 남는 p가 있다" not in text
    whole = render_every(topk=topk_record(topp=(17, 74, 50), mass=1.0))
    assert "확률을 모두 가져" in whole


TOPP = {"0.5": 21, "0.9": 72, "0.99": 111}


def test_fewer_survive_at_every_p_at_some_or_at_none():
    assert survivors_against_topp(topk_record(topp=(15, 39, 49)), TOPP) == "fewer"
    assert survivors_against_topp(topk_record(topp=(21, 39, 111)), TOPP) == "some"
    assert survivors_against_topp(topk_record(topp=(21, 72, 111)), TOPP) == "same"
    assert survivors_against_topp(topk_record(topp=(22, 39, 49)), TOPP) is None  # more at 0.5
    assert survivors_against_topp(topk_record(), None) is None
    assert cap_reached(topk_record(topp=(17, 50, 50)))  # k bounds where every survivor survived
    assert not cap_reached(topk_record(topp=(17, 39, 49)))


def test_the_mass_is_renormalised_only_where_the_top_k_hold_less_than_all_of_it():
    assert mass_against_topp(topk_record(mass=0.802), TOPP) == "renormalised"
    assert mass_against_topp(topk_record(mass=1.0), TOPP) == "whole"
    assert mass_against_topp(topk_record(mass=0.802), None) is None


def test_sampled_ids_past_the_tokenizer_are_counted(tiny_tokenizer, tmp_path):
    from test_vocabulary import Picks, wider_model

    loaded = wider_model(tiny_tokenizer, tmp_path, built_never_past=False)
    past = tiny_tokenizer.id_count + 7
    model = Picks(loaded.model, past)
    record = measured(model, tiny_tokenizer, run_info(loaded))
    assert all(summary.ids_past_tokenizer == 10 * 8 for summary in record.temp.values())
    assert "토크나이저 끝 너머의 id가 240개" in render_every(topk=record)
