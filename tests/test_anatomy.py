"""anatomy.json: each call of forward in one greedy generate, both ways, and its record.

Without MiniMind's source: the builtin model's calls against the formulas, on dense, MoE, LoRA,
YaRN and an untied head; the counter equal to FlopCounterMode's; the counter's gap (CPU SDPA)
named; the kernels of a generate attributed; the record summing its calls and reading back; a
probe whose runs part in two named unreliable; the split said only where its intervals decide it,
and no sentence of the section unsupported by the raw runs of noisy probes and rounds (bimodal,
drifting, one outlier, steady contention), which two planted judges show can fail. With it
(MMINFER_MINIMIND_SRC): MiniMind's own model and the builtin twin holding its weights give the
same calls and bytes under the same counter, and so do both backends loading MiniMind's saved
checkpoint of every kind (with the tokenizer fixture); a twin that keeps one logits row does not.
"""

from __future__ import annotations

import sys
from dataclasses import replace

import pytest
import torch
from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from knob_models import KINDS, models_of_kind
from oracles import ORACLES
from reportdata import BUSY, NOISE, QUIET, anatomy_record, every_record, latency_record, timed
from torch.utils.flop_counter import FlopCounterMode

from mminfer.measures.anatomy import decide
from mminfer.measures.anatomy.anatomy import CATEGORIES, PATHS, REST, TERMS, Anatomy
from mminfer.measures.anatomy.measure import (
    SDPA_CPU,
    counted_calls,
    formula_parts,
    measure_anatomy,
    past_last_level_bytes,
    path_counts,
    shape_of,
)
from mminfer.measures.anatomy.profile import PROFILE_ROUNDS, profile_path
from mminfer.model.generation import GREEDY
from mminfer.model.narrow import minimal_width
from mminfer.model.tokenizer import load_tokenizer
from mminfer.model.twin import MiniMindConfig, MiniMindForCausalLM, apply_lora, wrapped_forward
from mminfer.records import read_record, write_record
from mminfer.records.interval import median_interval
from mminfer.records.machine import speed_of, two_groups
from mminfer.report.decided import DecisionLog
from mminfer.report.render import render_reports, unwrap

SHAPE = {
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "vocab_size": 300,
}
PROMPT = torch.tensor([[1, 45, 120, 7, 200, 88, 19, 250, 64, 9]])  # P = 10
NEW_TOKENS = 5
VARIANTS = {
    "dense": {},
    "moe": {"use_moe": True},
    "moe_top2": {"use_moe": True, "num_experts_per_tok": 2, "moe_intermediate_size": 48},
    "untied": {"tie_word_embeddings": False},
    "yarn": {"inference_rope_scaling": True},
    "lora": {},
}


def builtin(name: str, seed: int = 0) -> MiniMindForCausalLM:
    torch.manual_seed(seed)
    model = MiniMindForCausalLM(MiniMindConfig(**SHAPE, **VARIANTS[name])).eval()
    if name == "lora":
        apply_lora(model, rank=8)
        for module in model.modules():
            if getattr(module, "lora", None) is not None:
                module.lora.B.weight.data.normal_(0.0, 0.3)
    return model


def calls_of(model, use_cache: bool):
    """(each call of forward, the ids generate returned)."""
    calls, _, output = counted_calls(
        model=model, input_ids=PROMPT, new_tokens=NEW_TOKENS, use_cache=use_cache
    )
    return calls, output


@pytest.mark.parametrize(("past", "inside"), [(128 << 20, False), (16 << 20, True)])
def test_a_probe_past_the_last_level_capped_inside_it_is_called_the_cache_s(past, inside):
    anatomy = EVERY["anatomy"]
    machine = anatomy.machine
    assert machine.last_level_bytes == 32 << 20
    probes = [
        replace(probe, working_set_bytes=past) if probe.at == "past_last_level" else probe
        for probe in machine.bandwidth
    ]
    anatomy = replace(anatomy, machine=replace(machine, bandwidth=probes))
    beyond = render_reports(EVERY | {"anatomy": anatomy})["beyond.md"]
    said = "보다 작아, 메모리가 아닌 캐시의 대역폭이다" in unwrap(beyond)
    assert said == inside


@pytest.mark.parametrize(
    ("last_level", "available", "past"),
    [
        (480 << 20, 16 << 30, 960 << 20),  # twice a server's 480 MiB L3
        (480 << 20, 3 << 30, 768 << 20),  # a quarter of what a 4 GB SLURM job has left
        (480 << 20, 1 << 30, 256 << 20),  # the cap wins over the cache: the log says it fits
        (8 << 20, 16 << 30, 64 << 20),  # a laptop's L3: at least 64 MiB
        (None, 16 << 30, 256 << 20),  # caches unknown
        (None, None, 256 << 20),
        (480 << 20, None, 960 << 20),  # memory unknown: no cap
    ],
)
def test_the_probe_past_the_last_level_is_twice_the_cache_within_a_quarter_of_the_memory(
    last_level, available, past
):
    assert past_last_level_bytes(last_level, available) == past


@pytest.mark.parametrize("name", list(VARIANTS))
@pytest.mark.parametrize("use_cache", [True, False])
def test_each_call_s_fed_context_and_logits_rows_follow_generate_s_loop(name, use_cache):
    calls, output = calls_of(builtin(name), use_cache)
    prompt_len = PROMPT.shape[1]
    contexts = [prompt_len + step for step in range(NEW_TOKENS)]
    fed = [prompt_len] + [1] * (NEW_TOKENS - 1) if use_cache else contexts
    assert [call.fed for call in calls] == fed
    assert [call.context for call in calls] == contexts
    assert [call.logits_rows for call in calls] == fed  # logits_to_keep=0: every fed position
    assert all(call.logits_rows_keep_one == 1 for call in calls)
    assert output.shape[1] == prompt_len + NEW_TOKENS


@pytest.mark.parametrize("name", list(VARIANTS))
@pytest.mark.parametrize("use_cache", [True, False])
def test_the_counter_equals_the_formula_wherever_it_sees_the_op(name, use_cache):
    """A one-token call takes the explicit matmul path: counted equals the formula. A call fed
    more (SDPA on the CPU) is short by the attention term exactly, and the kernel is named."""
    calls, _ = calls_of(builtin(name), use_cache)
    for call in calls:
        assert call.flops_formula == sum(call.formula_parts.values())
        assert call.flops_counted == call.flops_formula - call.flops_unseen
        if call.fed == 1:
            assert call.uncounted_ops == {} and call.flops_unseen == 0
        else:
            assert call.uncounted_ops == {SDPA_CPU: SHAPE["num_hidden_layers"]}
            assert call.flops_unseen == call.formula_parts["attention"] > 0


@pytest.mark.parametrize("name", list(VARIANTS))
@pytest.mark.parametrize("use_cache", [True, False])
def test_the_registry_counter_counts_what_flop_counter_mode_counts(name, use_cache):
    """The anatomy counts with FlopCounterMode's registry, op by op (RegistryFlops): on every
    call of both paths of every variant, its count equals FlopCounterMode's own."""
    model = builtin(name)
    counted = []

    def counting(original):
        def forward(*args, **kwargs):
            counter = FlopCounterMode(display=False)
            with counter:
                outputs = original(*args, **kwargs)
            counted.append(counter.get_total_flops())
            return outputs

        return forward

    with wrapped_forward(model, counting):
        model.generate(PROMPT, max_new_tokens=NEW_TOKENS, use_cache=use_cache, **GREEDY)
    calls, _ = calls_of(model, use_cache)
    assert [call.flops_counted for call in calls] == counted
    assert min(counted) > 0


def test_the_formula_s_parts_are_the_model_s_matmuls():
    """Per layer 2·t·in·out for q, k, v, o; 4·t·c·heads·head_dim for the attention; 6·t·h·I for
    the MLP; the lm_head 2·rows·h·V; a rank-8 LoRA on each square linear 2·t·8·(in + out)."""
    shape = shape_of(builtin("lora"))
    t, c, rows, h, d, layers = 3, 7, 3, 64, 16, 2
    parts = formula_parts(shape, t, c, rows)
    assert parts["projections"] == layers * 2 * t * (h * 64 + 2 * h * 32 + 64 * h)
    assert parts["attention"] == layers * 4 * t * c * 4 * d
    assert parts["mlp"] == layers * 6 * t * h * shape.intermediate
    assert parts["lm_head"] == 2 * rows * h * 300
    assert [name.split(".")[-1] for name, *_ in shape.lora] == ["q_proj", "o_proj"] * layers
    assert parts["lora"] == 2 * layers * 2 * t * 8 * (h + h)
    moe = formula_parts(shape_of(builtin("moe_top2")), t, c, rows)
    assert moe["router"] == layers * 2 * t * h * 4 and "mlp" not in moe
    assert moe["experts"] == layers * t * 2 * 6 * h * 48


@pytest.mark.parametrize("use_cache", [True, False])
def test_the_ops_of_a_generate_are_attributed_to_forward_or_between(use_cache):
    model = builtin("dense")
    calls, between, output = counted_calls(
        model=model, input_ids=PROMPT, new_tokens=NEW_TOKENS, use_cache=use_cache
    )
    plain = model.generate(PROMPT, max_new_tokens=NEW_TOKENS, use_cache=use_cache, **GREEDY)
    assert torch.equal(output, plain)  # the counter changes nothing generate does
    per_forward = [call.ops for call in calls]
    assert len(per_forward) == NEW_TOKENS and min(per_forward) > 0 and between > 0
    if use_cache:  # decode's explicit attention path runs more kernels than the prefill's SDPA
        assert per_forward[1] > per_forward[0]
        assert len(set(per_forward[1:])) == 1
    counts = path_counts(model=model, input_ids=PROMPT, new_tokens=NEW_TOKENS, use_cache=use_cache)
    assert counts.totals.ops == sum(per_forward) + between
    assert counts.totals.ops_between == between


def fingerprint(calls) -> list[tuple]:
    """What the parity compares per call: every count but the kernels (each backend's own)."""
    return [
        (
            call.fed,
            call.context,
            call.logits_rows,
            call.flops_counted,
            call.flops_formula,
            call.uncounted_ops,
            call.bytes_parts,
        )
        for call in calls
    ]


class KeepsOneRow(torch.nn.Module):
    """A twin whose forward computes the last position's logits only (logits_to_keep=1)."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner
        self.config = inner.config

    def forward(self, input_ids, attention_mask=None, past_key_values=None, **kwargs):
        kwargs["logits_to_keep"] = 1
        return self.inner.forward(input_ids, attention_mask, past_key_values, **kwargs)

    def generate(self, *args, **kwargs):
        return type(self.inner).generate(self, *args, **kwargs)


def test_a_twin_that_keeps_one_logits_row_fails_the_parity():
    """The same tokens, but fewer lm_head rows and FLOPs: the counts tell them apart (against
    the builtin here; against MiniMind's own forward below, where its source is)."""
    model = builtin("dense")
    reference, reference_ids = calls_of(model, use_cache=True)
    ours, our_ids = calls_of(KeepsOneRow(model), use_cache=True)
    assert torch.equal(reference_ids, our_ids)
    assert fingerprint(reference) != fingerprint(ours)
    assert ours[0].logits_rows == 1 and reference[0].logits_rows == PROMPT.shape[1]


# --- against MiniMind's own classes (optional) ---------------------------------------------------


@pytest.fixture(scope="module")
def minimind(minimind_src):
    sys.path.insert(0, str(minimind_src))
    from model import model_lora, model_minimind

    return model_minimind, model_lora


def minimind_twin(minimind, name: str, twin: torch.nn.Module) -> torch.nn.Module:
    """MiniMind's own model with ``twin``'s weights (its LoRA too, applied as MiniMind does)."""
    model_minimind, model_lora = minimind
    model = model_minimind.MiniMindForCausalLM(
        model_minimind.MiniMindConfig(**SHAPE, **VARIANTS[name])
    ).eval()
    if name == "lora":
        model_lora.apply_lora(model, rank=8)
    model.load_state_dict(twin.state_dict(), strict=True)
    return model


@pytest.mark.parametrize("name", list(VARIANTS))
@pytest.mark.parametrize("use_cache", [True, False])
def test_minimind_s_own_forward_gives_the_same_calls(minimind, name, use_cache):
    twin = builtin(name)
    theirs, their_ids = calls_of(minimind_twin(minimind, name, twin), use_cache)
    ours, our_ids = calls_of(twin, use_cache)
    assert torch.equal(their_ids, our_ids)
    assert fingerprint(theirs) == fingerprint(ours)


def test_a_twin_that_keeps_one_logits_row_fails_the_parity_with_minimind(minimind):
    twin = builtin("dense")
    theirs, their_ids = calls_of(minimind_twin(minimind, "dense", twin), use_cache=True)
    ours, our_ids = calls_of(KeepsOneRow(twin), use_cache=True)
    assert torch.equal(their_ids, our_ids)
    assert fingerprint(theirs) != fingerprint(ours)


@pytest.mark.parametrize("name", ["dense", "moe_top2", "lora"])
@pytest.mark.parametrize("use_cache", [True, False])
def test_minimind_s_own_forward_gives_the_same_bytes_per_call(minimind, name, use_cache):
    """The bytes by formula follow each call's counts: MiniMind's model and the twin give the
    same per call (the kernels are each backend's own: not compared)."""
    twin = builtin(name)
    args = {"input_ids": PROMPT, "new_tokens": NEW_TOKENS, "use_cache": use_cache}
    theirs = path_counts(model=minimind_twin(minimind, name, twin), **args)
    ours = path_counts(model=twin, **args)
    assert fingerprint(theirs.steps) == fingerprint(ours.steps)
    assert theirs.totals.bytes_formula == ours.totals.bytes_formula > 0


# --- under torch.profiler: where the time goes, and the fixed step --------------------------------


def profiled(model, use_cache: bool):
    return profile_path(
        model=model, input_ids=PROMPT, new_tokens=NEW_TOKENS, use_cache=use_cache, device="cpu"
    )


def assert_adds_up(profile) -> None:
    """Each round: the rest is never negative and is the wall minus the categories (the ops' self
    times add up to the top-level ops' time), so the parts add up to no more than the wall."""
    for parts in profile.rounds:
        ops = sum(parts[key] for key in CATEGORIES)
        assert parts[REST] >= 0 and ops <= parts["wall"], parts
        assert parts[REST] == pytest.approx(parts["wall"] - ops, abs=1e-9)
    assert profile.parts_interval[REST].runs == PROFILE_ROUNDS


@pytest.mark.parametrize("name", ["dense", "moe_top2", "lora", "yarn"])
@pytest.mark.parametrize("use_cache", [True, False])
def test_a_profiled_generate_adds_up_to_its_wall(name, use_cache):
    profile = profiled(builtin(name), use_cache)
    assert_adds_up(profile)
    assert (profile.parts_s["kv_cat"] > 0) == use_cache
    assert min(profile.parts_s["matmul"], profile.parts_s["repeat_kv"]) > 0


def test_the_minimal_width_keeps_the_layers_and_heads_and_generates():
    model = builtin("moe_top2")
    small = minimal_width(model)
    for key in ("num_hidden_layers", "num_attention_heads", "num_key_value_heads", "use_moe"):
        assert getattr(small.config, key) == getattr(model.config, key)
    assert small.config.hidden_size < model.config.hidden_size
    assert (small.config.intermediate_size, small.config.vocab_size) == (2, 2)
    ids = torch.ones((1, 10), dtype=torch.long)
    output = small.generate(ids, max_new_tokens=3, use_cache=True, **GREEDY)
    assert output.shape == (1, 13)


@pytest.mark.parametrize("use_cache", [True, False])
def test_minimind_s_own_model_profiles_into_the_same_categories(minimind, use_cache):
    profile = profiled(minimind_twin(minimind, "dense", builtin("dense")), use_cache)
    assert_adds_up(profile)
    assert (profile.parts_s["kv_cat"] > 0) == use_cache and profile.parts_s["repeat_kv"] > 0


# --- the record: anatomy.json -----------------------------------------------------------------


def test_the_record_sums_its_calls_names_the_gap_and_reads_back(tmp_path, tiny_run):
    model = builtin("dense")
    record = measure_anatomy(
        model=model,
        prompt_ids=PROMPT[0].tolist(),
        new_tokens=NEW_TOKENS,
        device="cpu",
        run=tiny_run,
        probe_runs=2,
        split_tolerance=0.5,
    )
    assert record.same_ids and record.prompt_len == PROMPT.shape[1]
    for name in PATHS:
        counts = record.path(name)
        totals = counts.totals
        assert totals.calls == len(counts.steps) == NEW_TOKENS
        for key in ("fed", "logits_rows", "flops_counted", "flops_formula", "bytes_formula"):
            assert getattr(totals, key) == sum(getattr(step, key) for step in counts.steps), key
        assert totals.ops == sum(step.ops for step in counts.steps) + totals.ops_between
        assert counts.working_set_bytes == totals.bytes_formula // totals.calls
    # the counter's gap is named with the formula's part, not raised
    assert record.uncounted_ops == {SDPA_CPU: "attention"}
    machine = record.machine
    assert min(machine.op.per_s, machine.matmul.per_s) > 0 and len(machine.op.runs_s) == 2
    assert [probe.at for probe in machine.bandwidth] == [*PATHS, "past_last_level"]
    for name in PATHS:
        assert_adds_up(record.profile[name])
    write_record(tmp_path / "anatomy.json", record)
    assert read_record(tmp_path / "anatomy.json", Anatomy) == record


@pytest.mark.parametrize(
    ("noise", "reliable"),
    [("quiet", True), ("bimodal", False), ("drifting", True), ("outlier", False)],
)
def test_a_probe_whose_runs_fall_into_two_groups_is_unreliable(noise, reliable):
    runs = [0.064 * factor for factor in NOISE[noise]]
    assert speed_of(runs, 1000, 0.0).reliable == reliable
    assert (not two_groups(runs)) == reliable


def split_at(record: Anatomy, measured_s: float, noise: str = "quiet"):
    return record.split("with_cache", median_interval([measured_s * f for f in NOISE[noise]]))


def test_the_split_is_said_only_where_its_intervals_decide_it():
    """One record against measured times: the model itself (adds up), three times it (under), half
    of it (over), twice it (the ratio straddles 1 - the tolerance: undecided); and a bimodal probe
    (unreliable: no term, no share, no fit of what it timed)."""
    record = anatomy_record()
    modeled = split_at(record, 1.0).modeled_s
    found = {
        measured: decide.fit(split_at(record, modeled * measured)) for measured in (1, 3, 0.5, 2)
    }
    assert found == {1: "adds_up", 3: "under", 0.5: "over", 2: "undecided"}
    split = split_at(anatomy_record(noises={"op": "bimodal"}), modeled)
    assert (decide.binding(split), decide.fit(split), decide.share_of(split, "dispatch")) == (
        "unreliable",
    ) * 3
    assert decide.share_of(split, "memory") == "share"


def test_an_achieved_rate_above_its_limit_is_never_a_share():
    """The memory term longer than the measured time (an achieved rate of 129 % of the probe's):
    said as the probe underestimating the limit, never as a share."""
    split = split_at(anatomy_record(bytes_per_s=1e9), 0.193 / 1.29 * 10)
    assert split.share("memory") > 1
    assert decide.share_of(split, "memory") == "exceeds"


def unsupported(records: dict) -> list[str]:
    """The anatomy's decisions the report wrote that the raw runs do not support: their oracles
    (tests/oracles_anatomy.py)."""
    log = DecisionLog()
    render_reports(records, decisions=log)  # beyond.md holds the anatomy's section
    found = []
    for claim in log.written:
        oracle = ORACLES.get(claim.key) if claim.key.startswith("anatomy.") else None
        if oracle is not None and not oracle(records, claim.cited):
            found.append(f"{claim.key}: {dict(claim.cited)}")
    return found


@st.composite
def noisy_records(draw) -> dict:
    """anatomy.json on a machine where each term may bind, each probe's runs quiet, bimodal,
    drifting, with one outlier or under steady contention; time.json's 3 to 9 rounds so, its
    narrow side a share of the cached runs; either run busy or not."""
    kinds = st.sampled_from(list(NOISE))
    mostly_quiet = st.sampled_from(["quiet"] * 12 + list(NOISE))  # one bimodal probe in 6 draws
    record = anatomy_record(
        op_s=draw(st.sampled_from([2e-7, 4e-6, 3e-5])),
        flops_per_s=draw(st.sampled_from([2e10, 3e11, 1e13])),
        bytes_per_s=draw(st.sampled_from([1e9, 3e10, 1e12])),
        noises={name: draw(mostly_quiet) for name in PROBES},
        seed=draw(st.integers(0, 99)),
        contention=draw(st.sampled_from([QUIET, BUSY])),
    )
    rounds = draw(st.sampled_from([3, 5, 7, 9, 9]))
    with_kind, without_kind = draw(kinds), draw(kinds)
    scale = draw(st.sampled_from([0.5, 1.0, 1.4, 3.0]))
    modeled = {path: record.split(path, median_interval([1.0])).modeled_s for path in PATHS}
    with_runs = [modeled["with_cache"] * scale * NOISE[with_kind][i % 7] for i in range(rounds)]
    # time.json's narrow side: a share of each round's cached run, under its own noise
    share, narrow_kind = draw(st.sampled_from([0.3, 0.8, 1.0, 1.3])), draw(kinds)
    time = timed(
        with_runs,
        [modeled["without_cache"] * scale * NOISE[without_kind][i % 7] for i in range(rounds)],
        narrow_runs=[run * share * NOISE[narrow_kind][i % 7] for i, run in enumerate(with_runs)],
        contention=draw(st.sampled_from([QUIET, BUSY])),
    )
    return EVERY | {"anatomy": record, "time": time, "latency": latency_record(time)}


EVERY = every_record()
PROBES = ["op", "matmul", *(f"bandwidth_{at}" for at in (*PATHS, "past_last_level"))]
PROPERTY = settings(max_examples=60, deadline=None, derandomize=True)
FIND = settings(PROPERTY, phases=[Phase.generate])  # a planted error: found, not shrunk


def supported(records: dict) -> None:
    assert unsupported(records) == []


@PROPERTY
@given(noisy_records())
def test_no_anatomy_sentence_renders_unsupported_by_its_runs(records):
    supported(records)


def test_the_property_test_catches_a_binding_term_read_off_the_medians(monkeypatch):
    """The split before issue 47: the term with the most seconds at the probes' medians binds,
    whatever the intervals and the probes' groups."""

    def planted(split):
        return max(TERMS, key=lambda term: split.seconds[term])

    monkeypatch.setattr(decide, "binding", planted)
    with pytest.raises(AssertionError):
        FIND(given(noisy_records())(supported))()


def test_the_property_test_catches_a_share_printed_past_its_limit(monkeypatch):
    """A term's share said wherever its median is under 100 %, however its interval spreads."""

    def planted(split, term):
        return "share" if split.share(term) < 1 else "exceeds"

    monkeypatch.setattr(decide, "share_of", planted)
    with pytest.raises(AssertionError):
        FIND(given(noisy_records())(supported))()


# --- the files a user has: MiniMind's checkpoint in both backends, MiniMind's tokenizer ----------

TEXT = (
    "가람 마을은 강가에 있는 작은 마을이다. 마을 사람들은 아침마다 시장에 나가 채소와 생선을 판다."
)


@pytest.fixture(scope="module", params=list(KINDS))
def saved_kind(request, minimind_src, tmp_path_factory):
    """(MiniMind's own model as eval_llm.py loads it, [builtin, minimind] from the same file)."""
    return models_of_kind(request.param, minimind_src, tmp_path_factory.mktemp(request.param))


@pytest.mark.parametrize("use_cache", [True, False])
def test_both_backends_count_what_minimind_s_own_model_counts(
    saved_kind, shared_fixtures, use_cache
):
    """On a dense, MoE, LoRA'd, YaRN and course-shaped checkpoint (tests/knob_models.py) and a
    prompt of MiniMind's tokenizer: each call's counts in both backends equal MiniMind's own."""
    tokenizer = load_tokenizer(shared_fixtures)
    prompt = torch.tensor([[tokenizer.bos_token_id] + tokenizer.encode(TEXT)[:30]])
    reference, backends = saved_kind
    args = {"input_ids": prompt, "new_tokens": 4, "use_cache": use_cache}
    expected = fingerprint(path_counts(model=reference, **args).steps)
    for model in backends:
        assert fingerprint(path_counts(model=model, **args).steps) == expected
