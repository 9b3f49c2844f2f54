"""The measurements: greedy with/without cache and fed-token counts (steps 1-2), the KV cache's
bytes (step 4), temperature sampling (step 5) and top-p survivors (step 6), timing's bookkeeping."""

from __future__ import annotations

import pytest
import torch
from conftest import CHAT_PROMPT, PRETRAIN_PROMPT, CachedStepsNudged
from shapes import GREEDY, prompt_of, small_config

from mminfer.measures.cache.measure import compare_cache
from mminfer.measures.kvbytes.measure import measure_kv_bytes
from mminfer.measures.temp.measure import (
    distinct_n,
    summarize_answers,
    temperature_draws,
    temperature_experiment,
)
from mminfer.measures.time.measure import time_cache
from mminfer.measures.topp.measure import entropy_bits, position_detail, survivors_by_p
from mminfer.model.cachebytes import cache_tensor_bytes, kv_formula_bytes, random_tokens
from mminfer.model.counting import (
    ForwardRecorder,
    fed_with_cache_formula,
    fed_without_cache_formula,
)
from mminfer.model.draws import Draws, Prompted, cut_at_eos, decoded_answers, temperature_key
from mminfer.model.generation import greedy_generate
from mminfer.records import Answer, RunInfo, from_json
from mminfer.timing.ab import Rounds


@pytest.fixture(scope="module")
def compare(tiny_tokenizer, tiny_run):
    """compare_cache(model, prompt_ids, new_tokens) on the CPU, with the tiny model's provenance."""

    def compare(model, prompt_ids: list[int], new_tokens: int):
        return compare_cache(
            model=model,
            prompt_ids=prompt_ids,
            new_tokens=new_tokens,
            device="cpu",
            tokenizer=tiny_tokenizer,
            prompt=PRETRAIN_PROMPT,
            run=tiny_run,
        )

    return compare


# --- steps 1-2: cache or not, same ids; tokens fed ------------------------------------------------


def test_greedy_ids_are_the_same_with_and_without_cache(compare, tiny_model):
    same, _ = compare(tiny_model, prompt_of(21), 16)
    assert same.same_ids is True and same.ids == same.ids_without_cache and len(same.ids) == 16
    assert same.first_difference is None


def test_greedy_generate_returns_only_the_new_tokens(tiny_model):
    prompt = prompt_of(9)
    new = greedy_generate(
        model=tiny_model, prompt_ids=prompt, new_tokens=5, use_cache=True, device="cpu"
    )
    full = tiny_model.generate(torch.tensor([prompt]), max_new_tokens=5, **GREEDY)
    assert new == full[0, 9:].tolist()


@pytest.mark.parametrize("prompt_len, new_tokens", [(5, 4), (17, 9), (3, 1)])
def test_fed_tokens_follow_their_formulas(compare, tiny_model, prompt_len, new_tokens):
    _, count = compare(tiny_model, prompt_of(prompt_len), new_tokens)
    # with the cache the prompt once, then one token for each of the remaining N - 1 steps
    assert count.fed_with_cache == prompt_len + new_tokens - 1
    # without it step i feeds P + i tokens: N * P + N(N - 1) / 2
    assert count.fed_without_cache == new_tokens * prompt_len + new_tokens * (new_tokens - 1) // 2
    assert count.calls_with_cache == count.calls_without_cache == new_tokens


def test_recorder_sees_each_forward_call_and_keeps_its_last_logits(tiny_model):
    with_cache, without_cache = ForwardRecorder(keep_logits=True), ForwardRecorder()
    for recorder, use_cache in ((with_cache, True), (without_cache, False)):
        greedy_generate(
            model=tiny_model,
            prompt_ids=prompt_of(6),
            new_tokens=4,
            use_cache=use_cache,
            device="cpu",
            recorder=recorder,
        )
    assert with_cache.fed_per_call == [6, 1, 1, 1]
    assert without_cache.fed_per_call == [6, 7, 8, 9]
    assert len(with_cache.last_logits) == 4
    assert with_cache.last_logits[0].shape == (1, tiny_model.config.vocab_size)
    assert with_cache.last_logits[0].dtype == torch.float32


def test_fed_formulas_for_the_task_sizes():
    # task: prompt_len 201 (bos + 200), 64 new tokens
    assert fed_with_cache_formula(201, 64) == 264  # 201 + 63
    assert fed_without_cache_formula(201, 64) == 14880  # 64 * 201 + 64 * 63 / 2 = 12864 + 2016


def test_forward_recorder_restores_forward_even_after_an_exception(tiny_model):
    assert "forward" not in vars(tiny_model)
    with ForwardRecorder().watching(tiny_model):
        assert "forward" in vars(tiny_model)
    assert "forward" not in vars(tiny_model)
    assert tiny_model.forward.__func__ is type(tiny_model).forward
    with pytest.raises(RuntimeError, match="boom"), ForwardRecorder().watching(tiny_model):
        raise RuntimeError("boom")
    assert "forward" not in vars(tiny_model)


def test_forward_recorder_restores_an_instance_forward():
    class Model(torch.nn.Module):
        def forward(self, input_ids):
            return "class"

    model = Model()
    own = lambda input_ids: "instance"  # noqa: E731
    model.forward = own
    with ForwardRecorder().watching(model) as recorder:
        model.forward(torch.zeros(1, 3, dtype=torch.long))
    assert recorder.fed_per_call == [3]
    assert model.forward is own


# --- step 4: cache bytes -------------------------------------------------------------------------


def test_kv_formula_bytes_is_two_layers_tokens_kv_heads_head_dim_bytes():
    shape = {"layers": 8, "tokens": 100, "kv_heads": 2, "head_dim": 32, "bytes_per_element": 4}
    assert kv_formula_bytes(**shape) == 409600
    assert kv_formula_bytes(**shape, batch=3) == 1228800


@pytest.mark.parametrize("dtype, size", [("float32", 4), ("bfloat16", 2)])
def test_measured_kv_bytes_equal_the_formula_with_k_before_repeat_kv(
    load_tiny, tiny_run, dtype, size
):
    loaded = load_tiny(dtype=dtype)
    config = loaded.config
    result = measure_kv_bytes(
        model=loaded.model, config=config, tokens=30, seed=0, device="cpu", run=tiny_run
    )
    # 2 (K, V) x 2 layers x 30 tokens x 2 KV heads x 16 head_dim x bytes
    assert result.measured_bytes == result.formula_bytes == 2 * 2 * 30 * 2 * 16 * size
    assert result.matches is True and result.tokens == 30
    assert (result.dtype, result.bytes_per_element) == (dtype, size)
    assert result.k_shape == [1, 30, config.num_key_value_heads, config.head_dim] == [1, 30, 2, 16]
    assert result.k_shape[2] != config.num_attention_heads
    assert result.after_repeat_kv_bytes == 2 * result.measured_bytes  # 4 heads / 2 KV heads


def test_cache_tensor_bytes_sums_every_tensor():
    half = torch.zeros(1, 5, 2, 4, dtype=torch.float16)
    cache = [(torch.zeros(1, 5, 2, 4), torch.zeros(1, 5, 2, 4)), (half, half.clone())]
    assert cache_tensor_bytes(cache) == 40 * 4 * 2 + 40 * 2 * 2


def test_random_tokens_follow_the_task_recipe_without_touching_the_global_rng():
    expected = torch.randint(3, 600, (1, 100), generator=torch.Generator().manual_seed(0))
    torch.manual_seed(11)
    before = torch.rand(3)
    torch.manual_seed(11)
    tokens = random_tokens(vocab_size=600, tokens=100, seed=0)
    assert torch.equal(tokens, expected) and tokens.min() >= 3
    assert torch.equal(torch.rand(3), before)


# --- step 5: temperature --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_sft(load_tiny, tiny_sft_checkpoint):
    return load_tiny(path=tiny_sft_checkpoint).model


@pytest.fixture(scope="module")
def question_ids(tiny_tokenizer):
    from mminfer.model.prompts import chat_prompt

    ids, _ = chat_prompt(tiny_tokenizer, "가람 마을의 특산물은 무엇인가요?")
    return ids


def sample_answers(model, tokenizer, prompt_ids, temperature, samples, new_tokens, seed, device):
    """``samples`` sampled answers at one temperature, cut before their first eos, decoded."""
    draws = temperature_draws(
        model=model,
        tokenizer=tokenizer,
        prompt_ids=prompt_ids,
        draws=Draws(samples=samples, new_tokens=new_tokens, seed=seed),
        temperatures=[temperature],
        device=device,
    )
    return decoded_answers(tokenizer, draws[float(temperature)])


def test_seeded_sampling_is_reproducible(tiny_sft, tiny_tokenizer, question_ids):
    args = (tiny_sft, tiny_tokenizer, question_ids, 1.0, 6, 8)
    first = sample_answers(*args, seed=0, device="cpu")
    torch.manual_seed(999)  # whatever happened to the global RNG before must not matter
    second = sample_answers(*args, seed=0, device="cpu")
    other = sample_answers(*args, seed=1, device="cpu")
    assert first == second and first != other and len(first) == 6


def experiment(model, tokenizer, prompt_ids, temperatures, run):
    """temperature_experiment with 6 samples of 8 tokens, seed 0, on the CPU."""
    return temperature_experiment(
        chat=Prompted(
            model=model,
            tokenizer=tokenizer,
            prompt_ids=prompt_ids,
            prompt=CHAT_PROMPT,
            device="cpu",
            run=run,
        ),
        temperatures=temperatures,
        draws=Draws(samples=6, new_tokens=8, seed=0),
    )


def test_temperature_experiment_reseeds_for_each_temperature_and_counts_distinct_answers(
    tiny_sft, tiny_tokenizer, question_ids, tiny_run
):
    both = experiment(tiny_sft, tiny_tokenizer, question_ids, [0.3, 1.0], tiny_run)
    alone = experiment(tiny_sft, tiny_tokenizer, question_ids, [1.0], tiny_run)
    assert list(both) == ["0.3", "1.0"] and alone["1.0"] == both["1.0"]
    answers = sample_answers(tiny_sft, tiny_tokenizer, question_ids, 1.0, 6, 8, 0, "cpu")
    assert alone["1.0"].distinct == len(set(answers)) and alone["1.0"].samples == 6


class EosShim:
    """The tiny tokenizer with another token playing eos (so that eos is certain to be sampled)."""

    def __init__(self, tokenizer, eos_token_id: int):
        self.eos_token_id = eos_token_id
        self.decode = tokenizer.decode


def test_answers_are_cut_before_eos(tiny_sft, tiny_tokenizer, question_ids):
    # Row 0's first sampled token under seed 0 becomes "eos": row 0's answer must then be empty.
    sampling = {"do_sample": True, "top_k": 0, "top_p": 1.0, "temperature": 1.5}
    sampling |= {"max_new_tokens": 12, "num_return_sequences": 8}
    torch.manual_seed(0)
    free = tiny_sft.generate(torch.tensor([question_ids]), eos_token_id=None, **sampling)
    eos = free[0, len(question_ids)].item()
    answers = sample_answers(
        tiny_sft, EosShim(tiny_tokenizer, eos), question_ids, 1.5, 8, 12, seed=0, device="cpu"
    )
    assert answers[0] == ""
    torch.manual_seed(0)
    rows = tiny_sft.generate(torch.tensor([question_ids]), eos_token_id=eos, **sampling)
    expected = []
    for row in rows[:, len(question_ids) :].tolist():
        row = row[: row.index(eos)] if eos in row else row
        expected.append(tiny_tokenizer.decode(row, skip_special_tokens=False))
    assert answers == expected


def test_cut_at_eos():
    assert cut_at_eos([5, 6, 2, 7, 2], 2) == [5, 6] and cut_at_eos([2, 5], 2) == []
    assert cut_at_eos([5, 6, 7], 2) == [5, 6, 7]


def test_temperature_keys_are_written_as_the_task_writes_them():
    assert [temperature_key(t) for t in (0.3, 1.0, 1.5, 1, 0.99)] == [
        "0.3",
        "1.0",
        "1.5",
        "1.0",
        "0.99",
    ]


def test_distinct_n_on_hand_made_answers():
    answers = ["abab", "ab"]
    # characters: a b a b a b -> 2 distinct of 6
    assert distinct_n(answers, 1) == pytest.approx(2 / 6)
    # bigrams: ab ba ab | ab -> 2 distinct (ab, ba) of 4
    assert distinct_n(answers, 2) == pytest.approx(2 / 4)
    # no answer long enough for a 5-gram
    assert distinct_n(answers, 5) == 0.0


def test_summarize_answers_counts_distinct_and_top_share(tiny_run):
    summary = summarize_answers(["사과", "배", "사과", "사과 "], 0, CHAT_PROMPT, tiny_run)
    assert summary.distinct == 3 and summary.samples == 4  # whitespace makes another answer
    assert summary.top_share == pytest.approx(0.5)
    assert summary.answers[0] == Answer(answer="사과", count=2)


# --- step 6: top-p survivors ---------------------------------------------------------------------


def test_top_p_survivors_on_hand_made_logits_which_they_do_not_modify():
    logits = torch.tensor([0.5, 0.3, 0.2]).log()
    copy = logits.clone()
    # cumsum [0.5, 0.8, 1.0]: p=0.4 -> 1 (top only); p=0.6 -> 2; p=0.85 -> 3
    assert list(survivors_by_p(logits, [0.4, 0.6, 0.85]).values()) == [1, 2, 3]
    assert torch.equal(logits, copy)


def test_survivors_by_p_keys_and_monotonic_counts(tiny_model):
    with torch.no_grad():
        logits = tiny_model(torch.tensor([[1, 40, 41]])).logits[0, -1].float()
    result = survivors_by_p(logits, [0.5, 0.9, 0.99])
    assert list(result) == ["0.5", "0.9", "0.99"]
    assert 1 <= result["0.5"] <= result["0.9"] <= result["0.99"] <= tiny_model.config.vocab_size


def test_a_position_s_entropy_is_in_bits_and_its_perplexity_the_tokens_it_spreads_over(
    tiny_tokenizer,
):
    """Even over 8 of 16 tokens: 3 bits, perplexity 8 (2 to the bits); one sure token: 0 bits."""
    even = torch.tensor([0.0] * 8 + [-float("inf")] * 8)
    position = position_detail(tiny_tokenizer, "x", even, [0.5], top=4)
    assert position.entropy_bits == pytest.approx(3.0)
    assert position.perplexity == pytest.approx(8.0)
    assert entropy_bits(torch.tensor([0.0] + [-float("inf")] * 15)) == pytest.approx(0.0)


# --- step 3: timing's bookkeeping (not the clock) -------------------------------------------------


def test_time_cache_reports_median_of_timed_runs_and_speedup(tiny_model, tiny_run):
    result = time_cache(
        model=tiny_model,
        prompt_ids=prompt_of(8),
        new_tokens=3,
        rounds=Rounds(warmup=1, runs=3, max_runs=3),
        device="cpu",
        run=tiny_run,
    )
    assert len(result.with_cache_runs_s) == 3 and len(result.with_cache_warmup_s) == 1
    assert result.with_cache_s == sorted(result.with_cache_runs_s)[1]
    assert result.without_cache_s == sorted(result.without_cache_runs_s)[1]
    assert result.speedup == pytest.approx(result.without_cache_s / result.with_cache_s)


# --- the same measurements on MiniMind's own model (optional) -------------------------------------


@pytest.fixture(scope="module")
def minimind_loaded(load_tiny, minimind_src):
    return load_tiny(backend="minimind", minimind_src=minimind_src)


def test_minimind_backend_counts_follow_the_formulas(compare, minimind_loaded, tiny_model):
    same, count = compare(minimind_loaded.model, prompt_of(11), 7)
    assert same.same_ids is True
    assert count.fed_with_cache == 11 + 7 - 1
    assert count.fed_without_cache == 7 * 11 + 7 * 6 // 2
    assert same.ids == compare(tiny_model, prompt_of(11), 7)[0].ids
    assert "forward" not in vars(minimind_loaded.model)


def test_minimind_backend_kv_bytes_equal_formula(minimind_loaded, tiny_run):
    config = minimind_loaded.config
    result = measure_kv_bytes(
        model=minimind_loaded.model, config=config, tokens=20, seed=0, device="cpu", run=tiny_run
    )
    assert result.k_shape == [1, 20, config.num_key_value_heads, config.head_dim]
    assert result.measured_bytes == result.formula_bytes == 2 * 2 * 20 * 2 * 16 * 4


# --- a difference between the paths is diagnosed, not just reported ------------------------------


def test_first_differing_step_is_diagnosed_with_margins(compare, tiny_model):
    nudged = CachedStepsNudged(tiny_model)
    same, count = compare(nudged, prompt_of(12), 5)
    assert same.same_ids is False
    diff = same.first_difference
    assert diff.step == 1  # step 0 feeds the whole prompt on both paths
    assert diff.token_with_cache == 7 and diff.token_without_cache != 7
    assert diff.margin_with_cache > 0 and diff.margin_without_cache >= 0
    assert diff.max_abs_logit_diff >= 49.0
    assert count.fed_with_cache == fed_with_cache_formula(12, 5)  # counting is unaffected


def test_report_says_plainly_where_the_paths_differ(compare, tiny_model):
    from reportdata import RUN, task_records

    from mminfer.report.render import render_report

    same, count = compare(CachedStepsNudged(tiny_model), prompt_of(12), 5)
    same.run = from_json(RunInfo, RUN)  # float32
    text = render_report(task_records(same=same, count=count))
    assert "same_ids = false" in text and "1번째 단계" in text
    assert "의심" in text  # a margin of ~50 is no rounding: the report points at the cache path


def test_sharp_position_keeps_fewer_candidates_than_open_one_on_a_model_built_so():
    """A model whose next-token logits depend on the last token only: blocks add nothing (o_proj and
    down_proj are zero), so the head sees the last token's embedding. After token 5 the head is flat
    (an open position); after token 6 one token stands out (a sharp position)."""
    from mminfer.model.draws import next_token_logits
    from mminfer.model.twin import MiniMindForCausalLM

    config = small_config(
        hidden=16, layers=1, heads=2, kv_heads=1, vocab=40, positions=32, tie_word_embeddings=False
    )
    model = MiniMindForCausalLM(config).eval()
    with torch.no_grad():
        for layer in model.model.layers:
            layer.self_attn.o_proj.weight.zero_()
            layer.mlp.down_proj.weight.zero_()
        model.model.embed_tokens.weight.zero_()
        model.model.embed_tokens.weight[5, 0] = 1.0  # open: direction 0
        model.model.embed_tokens.weight[6, 1] = 1.0  # sharp: direction 1
        model.lm_head.weight.zero_()
        model.lm_head.weight[:, 0] = torch.linspace(0.0, 0.5, 40)  # nearly flat over the vocabulary
        model.lm_head.weight[9, 1] = 3.0  # after token 6, token 9 takes almost all the mass
    ps = [0.5, 0.9, 0.99]
    open_survivors = survivors_by_p(next_token_logits(model, [1, 5], "cpu"), ps)
    sharp_survivors = survivors_by_p(next_token_logits(model, [1, 6], "cpu"), ps)
    assert all(sharp_survivors[key] < open_survivors[key] for key in open_survivors)
    assert sharp_survivors["0.5"] == 1 and open_survivors["0.5"] > 10
