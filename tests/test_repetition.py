"""repetition.json (mminfer.measures.repetition.measure): penalty 1.0 draws temp.json's answers
exactly; looping
answers; greedy's first step off plain greedy; the cost's timing shape; the section follows its
record."""

from __future__ import annotations

from conftest import CHAT_PROMPT, PRETRAIN_PROMPT
from reportdata import render_every, repetition_record, repetition_timed
from shapes import prompt_of

from mminfer.measures.repetition.measure import (
    RepetitionSettings,
    first_divergence,
    loops,
    measure_repetition,
    repeated_ngrams,
)
from mminfer.measures.temp.measure import summarize_temperatures, temperature_draws
from mminfer.model.draws import Draws, Prompted
from mminfer.model.loading import run_info
from mminfer.model.prompts import chat_prompt
from mminfer.timing.ab import Rounds


def measured(model, tokenizer, run, penalties=(1.0, 1.1, 1.3)):
    prompt_ids, _ = chat_prompt(tokenizer, CHAT_PROMPT.question)
    return measure_repetition(
        sft=Prompted(model, tokenizer, prompt_ids, CHAT_PROMPT, "cpu", run),
        greedy=Prompted(model, tokenizer, prompt_of(21), PRETRAIN_PROMPT, "cpu", run),
        settings=RepetitionSettings(
            question=CHAT_PROMPT.question,
            chatml_fallback=False,
            temperature=1.0,
            penalties=list(penalties),
            greedy_new_tokens=16,
        ),
        draws=Draws(samples=12, new_tokens=8, seed=0),
        rounds=Rounds(warmup=0, runs=1, max_runs=1),
    )


def test_penalty_one_is_temps_row_at_that_temperature(tiny_model, tiny_tokenizer, tiny_run):
    prompt_ids, _ = chat_prompt(tiny_tokenizer, CHAT_PROMPT.question)
    draws = temperature_draws(
        model=tiny_model,
        tokenizer=tiny_tokenizer,
        prompt_ids=prompt_ids,
        temperatures=[1.0],
        draws=Draws(samples=12, new_tokens=8, seed=0),
        device="cpu",
    )
    temp = summarize_temperatures(tiny_tokenizer, draws, CHAT_PROMPT, tiny_run)
    record = measured(tiny_model, tiny_tokenizer, tiny_run)
    off = record.penalties["1.0"]
    assert off.distinct == temp["1.0"].distinct
    assert [(a.answer, a.count) for a in off.answers] == [
        (a.answer, a.count) for a in temp["1.0"].answers
    ]
    assert off.greedy_first_divergence is None
    for penalty in record.penalties.values():
        assert penalty.greedy_repeated_ngrams == repeated_ngrams(penalty.greedy_ids)


def test_repeated_ngrams_count_every_run_that_comes_back():
    assert repeated_ngrams([1, 2, 3, 4, 5]) == 0
    assert repeated_ngrams([1, 2, 3, 1, 2, 3, 1, 2, 3]) == 4  # 7 trigrams, 3 distinct
    assert repeated_ngrams([5] * 10) == 7  # 8 trigrams, 1 distinct


def test_a_loop_is_an_ngram_that_comes_back():
    assert loops([1, 2, 3, 9, 1, 2, 3])
    assert not loops([1, 2, 3, 4, 1, 2, 5])
    assert first_divergence([1, 2, 3], [1, 2, 4]) == 2 and first_divergence([1], [1]) is None


def test_the_cost_times_the_penalty_farthest_from_one(tiny_model, tiny_tokenizer, tiny_run):
    record = measured(tiny_model, tiny_tokenizer, tiny_run, penalties=(1.0, 0.8, 1.1))
    timing = record.timing
    assert timing.penalty == 0.8 and timing.rows == 12 and timing.steps == 8
    assert len(timing.with_penalty_runs_s) == timing.runs_done >= 1
    assert timing.verdict in ("ok", "noisy", "untrusted")
    assert measured(tiny_model, tiny_tokenizer, tiny_run, penalties=(1.0,)).timing is None


def test_the_section_follows_the_records_direction():
    fewer = render_every(repetition=repetition_record(distinct=(24, 20, 18)))
    assert "24 → 20 → 18개로 줄었다" in fewer
    mixed = render_every(repetition=repetition_record(distinct=(20, 22, 17)))
    assert "20 → 22 → 17개로 오르내렸다" in mixed
    faster = [0.40, 0.41, 0.42, 0.40, 0.41, 0.42, 0.41]  # the penalty faster in every round
    untrusted = repetition_timed(faster, [0.43, 0.44, 0.45, 0.44, 0.43, 0.45, 0.44])
    assert untrusted.timing.verdict == "untrusted" and untrusted.timing.penalty_costs == "no"
    assert "이 시간은 믿으면 안 된다" in render_every(repetition=untrusted)


def test_the_cost_is_a_share_only_where_its_rounds_decide_it():
    noisy = repetition_timed([0.3, 0.5, 4.0], [0.4335, 0.4335, 0.44])  # slower in 2 of 3 rounds
    assert noisy.timing.penalty_costs == "undecided"
    text = render_every(repetition=noisy)
    assert "라운드 3회로는 페널티의 몫을 가를 수 없다" in text
    assert "페널티의 몫은 전체 시간의" not in text


def test_greedy_repeats_are_counted_where_the_samples_never_loop():
    text = render_every(repetition=repetition_record(looping=(0, 0, 0)))
    assert "샘플한 답은 어느 페널티에서도 반복하지 않았다" in text
    assert "되풀이된 3-gram이 58 → 2 → 0개로 줄었다" in text


def test_sampled_ids_past_the_tokenizer_are_counted(tiny_tokenizer, tmp_path):
    from test_vocabulary import Picks, wider_model

    loaded = wider_model(tiny_tokenizer, tmp_path, built_never_past=False)
    model = Picks(loaded.model, tiny_tokenizer.id_count + 7)
    record = measured(model, tiny_tokenizer, run_info(loaded), penalties=(1.0,))
    assert record.penalties["1.0"].ids_past_tokenizer == 12 * 8
