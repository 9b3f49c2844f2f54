"""Every MiniMind model a learner runs: MoE, an untied head, a LoRA on the SFT model, YaRN.

Without MiniMind's source: the builtin model's arithmetic against references written from
MiniMind's description, and the checks on what a checkpoint, config.json or LoRA file may say.
With it (MMINFER_MINIMIND_SRC): checkpoints made by MiniMind's own classes and saved as its
trainers save them, bit-identical in both backends and to MiniMind's own model built with the
same switch, as eval_llm.py builds it.
"""

from __future__ import annotations

import json

import pytest
import torch
from knob_models import minimind_models
from shapes import GREEDY

from mminfer.errors import MminferError
from mminfer.model.cachebytes import cache_tensor_bytes, fill_cache, kv_formula_bytes
from mminfer.model.checkpoints import rope_settings
from mminfer.model.generation import greedy_generate
from mminfer.model.loading import (
    ModelSpec,
    active_parameters,
    count_parameters,
    load_model,
    run_info,
)
from mminfer.model.twin import (
    MINIMIND_YARN,
    MiniMindConfig,
    MiniMindForCausalLM,
    MoEFeedForward,
    apply_lora,
    rotary_tables,
)

SHAPE = {
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "vocab_size": 300,
}
PROMPT = torch.tensor([[1, 45, 120, 7, 200, 88, 19, 250, 64, 9]])


def save_as_trainers_do(model: torch.nn.Module, path):
    """MiniMind's trainers: torch.save({k: v.half()}) of the state_dict."""
    torch.save({k: v.half() for k, v in model.state_dict().items()}, path)
    return path


def builtin_checkpoint(tmp_path, name: str, seed: int = 0, **settings):
    torch.manual_seed(seed)
    model = MiniMindForCausalLM(MiniMindConfig(**SHAPE, **settings))
    return save_as_trainers_do(model, tmp_path / f"{name}.pth")


def load(path, backend="builtin", lora=None, minimind_src=None, **overrides):
    spec = ModelSpec(backend=backend, minimind_src=minimind_src, overrides=overrides)
    return load_model(path, spec, lora=lora)


def greedy(model, use_cache: bool) -> torch.Tensor:
    return model.generate(PROMPT, max_new_tokens=10, use_cache=use_cache, **GREEDY)


# --- MoE ---------------------------------------------------------------------------------------


def test_moe_checkpoint_reads_its_experts_off_the_shapes(tmp_path):
    path = builtin_checkpoint(
        tmp_path, "moe", use_moe=True, num_experts=3, moe_intermediate_size=40
    )
    config = load(path).config
    assert config.use_moe and config.num_experts == 3 and config.moe_intermediate_size == 40
    assert config.num_experts_per_tok == 1 and config.norm_topk_prob is True  # MiniMind's defaults
    assert load(path, num_experts_per_tok=2).config.num_experts_per_tok == 2  # config key model
    with pytest.raises(MminferError, match="'model.num_experts_per_tok' asks for 4"):
        load(path, num_experts_per_tok=4)


def test_moe_layer_is_the_weighted_sum_of_its_chosen_experts():
    torch.manual_seed(0)
    config = MiniMindConfig(**SHAPE, use_moe=True, num_experts=4, num_experts_per_tok=2)
    moe = MoEFeedForward(config).eval()
    x = torch.randn(2, 5, 64)
    with torch.no_grad():
        weights, chosen = moe.route(x.view(-1, 64))
        expected = torch.zeros(10, 64)
        for token in range(10):
            for slot in range(2):
                expert = moe.experts[int(chosen[token, slot])]
                expected[token] += weights[token, slot] * expert(x.view(-1, 64)[token])
        assert torch.allclose(moe(x).view(-1, 64), expected, atol=1e-6)
        assert torch.allclose(weights.sum(-1), torch.ones(10))  # norm_topk_prob


def test_moe_greedy_ids_are_the_same_with_and_without_the_cache(tmp_path):
    model = load(builtin_checkpoint(tmp_path, "moe", use_moe=True)).model
    assert torch.equal(greedy(model, True), greedy(model, False))


def test_moe_caches_as_many_bytes_as_the_dense_model_of_its_attention(tmp_path):
    dense = load(builtin_checkpoint(tmp_path, "dense"))
    moe = load(builtin_checkpoint(tmp_path, "moe", use_moe=True))
    for loaded in (dense, moe):
        cache, _ = fill_cache(
            model=loaded.model, config=loaded.config, tokens=20, seed=0, device="cpu"
        )
        assert cache_tensor_bytes(cache) == kv_formula_bytes(
            layers=2, tokens=20, kv_heads=2, head_dim=16, bytes_per_element=4
        )


def test_moe_counts_every_expert_but_activates_its_share(tmp_path):
    loaded = load(builtin_checkpoint(tmp_path, "moe", use_moe=True, num_experts=4))
    per_expert = sum(p.numel() for p in loaded.model.model.layers[0].mlp.experts[0].parameters())
    total = count_parameters(loaded.model)
    assert active_parameters(loaded.model, loaded.config) == total - 2 * 3 * per_expert
    run = run_info(loaded)
    assert (run.parameters, run.active_parameters) == (total, total - 6 * per_expert)
    assert run.config["use_moe"] and run.config["num_experts"] == 4


# --- YaRN ----------------------------------------------------------------------------------------


def test_yarn_keeps_the_fast_dimensions_and_slows_the_slow_ones_by_the_factor():
    plain_cos, _ = rotary_tables(64, 32768, 1e6)
    yarn_cos, _ = rotary_tables(64, 32768, 1e6, MINIMIND_YARN)
    assert torch.equal(yarn_cos[:, 0], plain_cos[:, 0])  # dimension 0 turns fast: unchanged
    exponent = torch.tensor(62 / 64)
    slowest = (1.0 / (1e6**exponent)) / 16  # the last dimension's frequency, divided by factor 16
    positions = torch.arange(32768).float()
    assert torch.allclose(yarn_cos[:, 31], torch.cos(positions * slowest), atol=1e-5)


def test_yarn_leaves_a_table_within_the_original_context_alone():
    yarn, plain = rotary_tables(32, 2048, 1e6, MINIMIND_YARN), rotary_tables(32, 2048, 1e6)
    assert torch.equal(yarn[0], plain[0])


def test_yarn_changes_the_greedy_ids(tmp_path):
    path = builtin_checkpoint(tmp_path, "dense")
    plain = load(path).model
    yarn = load(path, inference_rope_scaling=True)
    assert yarn.config.rope_scaling == MINIMIND_YARN
    with torch.no_grad():
        assert not torch.equal(plain(PROMPT).logits, yarn.model(PROMPT).logits)


def folder_with(tmp_path, path, config: dict):
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "pytorch_model.bin").write_bytes(path.read_bytes())
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return folder


def test_a_folders_minimind_yarn_is_honoured(tmp_path):
    yarn = {**MINIMIND_YARN, "rope_type": "yarn", "rope_theta": 1e6}  # as transformers 5 saves it
    folder = folder_with(tmp_path, builtin_checkpoint(tmp_path, "dense"), {"rope_scaling": yarn})
    config = load(folder).config
    assert config.inference_rope_scaling and config.rope_scaling == MINIMIND_YARN


def test_a_folders_yarn_of_other_parameters_is_refused(tmp_path):
    other = {**MINIMIND_YARN, "factor": 8}  # MiniMind's config would drop it and use 16
    folder = folder_with(tmp_path, builtin_checkpoint(tmp_path, "dense"), {"rope_scaling": other})
    with pytest.raises(MminferError, match="its factor differ from MiniMind's"):
        load(folder)


def test_the_config_key_decides_over_the_folder(tmp_path):
    folder = folder_with(tmp_path, builtin_checkpoint(tmp_path, "dense"), {"rope_scaling": None})
    assert load(folder, inference_rope_scaling=True).config.rope_scaling == MINIMIND_YARN
    assert load(folder).config.rope_scaling is None


@pytest.mark.parametrize(
    "scaling, said",
    [
        ({"type": "linear", "factor": 4.0}, "its type is 'linear'"),
        ({"rope_type": "yarn", "factor": 4.0, "mscale": 0.7}, "['mscale'] are not MiniMind's"),
    ],
)
def test_another_rope_scaling_is_refused_never_dropped(scaling, said):
    with pytest.raises(MminferError, match="is not MiniMind's YaRN") as info:
        rope_settings({"rope_scaling": scaling}, {}, 1e6, "m")
    assert said in str(info.value)


def test_transformers_default_rope_parameters_mean_no_scaling_at_the_models_theta_only():
    def settings(theta):
        return rope_settings(
            {"rope_parameters": {"rope_type": "default", "rope_theta": theta}}, {}, 1e6, "m"
        )

    assert settings(1e6) == {"inference_rope_scaling": False, "rope_scaling": None}
    with pytest.raises(MminferError, match="says rope_theta 10000.0 but the model would run"):
        settings(1e4)


# --- LoRA ----------------------------------------------------------------------------------------


def lora_file(model: MiniMindForCausalLM, path, rank: int = 4, seed: int = 1, drop=()):
    """A LoRA as MiniMind's save_lora writes it ({<module>.lora.A/B.weight: half}), random B."""
    torch.manual_seed(seed)
    state = {}
    for name in apply_lora(model, rank):
        if name in drop:
            continue
        module = model.get_submodule(name)
        module.lora.B.weight.data.normal_(0.0, 0.3)
        state[f"{name}.lora.A.weight"] = module.lora.A.weight.detach().half()
        state[f"{name}.lora.B.weight"] = module.lora.B.weight.detach().half()
    torch.save(state, path)
    return path


def test_lora_applies_every_square_layers_update_unmerged(tmp_path):
    path = builtin_checkpoint(tmp_path, "sft")
    base = load(path).model
    lora = lora_file(load(path).model, tmp_path / "lora.pth")
    loaded = load(path, lora=lora)
    assert loaded.lora.rank == 4 and loaded.lora.modules == 4  # q_proj and o_proj of 2 layers
    merged = load(path).model
    pairs = torch.load(lora, weights_only=True)
    with torch.no_grad():
        for name in ("q_proj", "o_proj"):
            for index in range(2):
                key = f"model.layers.{index}.self_attn.{name}"
                update = (
                    pairs[f"{key}.lora.B.weight"].float() @ pairs[f"{key}.lora.A.weight"].float()
                )
                merged.get_submodule(key).weight += update
        assert torch.allclose(loaded.model(PROMPT).logits, merged(PROMPT).logits, atol=1e-4)
        assert not torch.allclose(loaded.model(PROMPT).logits, base(PROMPT).logits, atol=1e-3)
    run = run_info(loaded)  # the run block names the LoRA
    assert run.lora.path == str(lora) and len(run.lora.sha256) == 64 and run.lora.rank == 4
    assert run.parameters == count_parameters(base) + run.lora.parameters


def test_lora_naming_a_layer_that_is_not_square_names_the_key(tmp_path):
    path = builtin_checkpoint(tmp_path, "sft")
    lora = tmp_path / "lora.pth"
    lora_file(load(path).model, lora)
    state = torch.load(lora, weights_only=True)
    state["model.layers.0.self_attn.k_proj.lora.A.weight"] = torch.zeros(4, 64).half()
    state["model.layers.0.self_attn.k_proj.lora.B.weight"] = torch.zeros(32, 4).half()
    torch.save(state, lora)
    with pytest.raises(MminferError, match="k_proj.lora.A.weight names .*k_proj, which is not a"):
        load(path, lora=lora)


def test_lora_missing_a_square_layer_names_it(tmp_path):
    path = builtin_checkpoint(tmp_path, "sft")
    lora = lora_file(
        load(path).model, tmp_path / "lora.pth", drop=["model.layers.1.self_attn.o_proj"]
    )
    with pytest.raises(MminferError, match="square linear layer model.layers.1.self_attn.o_proj"):
        load(path, lora=lora)


def test_lora_of_another_width_names_the_shape(tmp_path):
    path = builtin_checkpoint(tmp_path, "sft")
    wide = MiniMindForCausalLM(MiniMindConfig(**{**SHAPE, "hidden_size": 128}))
    lora = lora_file(wide, tmp_path / "lora.pth")
    with pytest.raises(MminferError, match=r"q_proj.lora.A.weight has shape \(4, 128\)"):
        load(path, lora=lora)


def test_a_file_that_is_not_a_lora_is_refused(tmp_path):
    path = builtin_checkpoint(tmp_path, "sft")
    with pytest.raises(MminferError, match="'model.embed_tokens.weight' is not a LoRA weight"):
        load(path, lora=path)


# --- against MiniMind's own classes (optional) ---------------------------------------------------


VARIANTS = {
    "moe": ({"use_moe": True}, {}, False),
    "moe_top2": ({"use_moe": True, "num_experts_per_tok": 2}, {"num_experts_per_tok": 2}, False),
    "untied": ({"tie_word_embeddings": False}, {}, False),
    "yarn": ({"inference_rope_scaling": True}, {"inference_rope_scaling": True}, False),
    "lora": ({}, {}, True),
}


@pytest.fixture(scope="module", params=list(VARIANTS))
def variant(request, minimind_src, tmp_path_factory):
    """(MiniMind's own model with the switch, as eval_llm.py loads it; mminfer's builtin and
    minimind backends loading the files its trainers wrote)."""
    folder = tmp_path_factory.mktemp(request.param)
    switches, overrides, with_lora = VARIANTS[request.param]
    return minimind_models(minimind_src, folder, switches, overrides, with_lora, SHAPE, False)


def test_logits_and_caches_are_bit_identical_to_minimind(variant):
    reference, backends = variant
    with torch.no_grad():
        expected = reference(PROMPT, use_cache=True)
        for model in backends:
            out = model(PROMPT, use_cache=True)
            assert torch.equal(out.logits, expected.logits)
            for (k, v), (k_ref, v_ref) in zip(out.past_key_values, expected.past_key_values):
                assert torch.equal(k, k_ref) and torch.equal(v, v_ref)


@pytest.mark.parametrize("use_cache", [True, False])
def test_greedy_ids_are_identical_to_minimind(variant, use_cache):
    reference, backends = variant
    expected = greedy(reference, use_cache)
    for model in backends:
        assert torch.equal(greedy(model, use_cache), expected)


def test_seeded_samples_are_identical_to_minimind(variant):
    reference, backends = variant
    kwargs = {"max_new_tokens": 8, "temperature": 1.3, "top_k": 0, "top_p": 0.9}
    kwargs["num_return_sequences"] = 5
    torch.manual_seed(4)
    expected = reference.generate(PROMPT, **kwargs)
    for model in backends:
        torch.manual_seed(4)
        assert torch.equal(model.generate(PROMPT, **kwargs), expected)


def test_greedy_helper_reads_the_same_new_tokens(variant):
    reference, backends = variant
    ids = PROMPT[0].tolist()
    expected = greedy_generate(
        model=reference, prompt_ids=ids, new_tokens=6, use_cache=True, device="cpu"
    )
    assert all(
        greedy_generate(model=model, prompt_ids=ids, new_tokens=6, use_cache=False, device="cpu")
        == expected
        for model in backends
    )
