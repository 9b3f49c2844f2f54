"""Reading checkpoints, inferring the config from shapes, strict key checks, backends, dtypes."""

from __future__ import annotations

import json

import pytest
import torch
from shapes import small_config

from mminfer.errors import MminferError
from mminfer.model.checkpoints import check_keys, infer_config, read_state_dict
from mminfer.model.loading import (
    choose_backend,
    load_model,
    resolve_device,
    resolve_dtype,
    save_state_dict,
)
from mminfer.model.twin import MiniMindConfig, MiniMindForCausalLM


@pytest.fixture(scope="module")
def tiny_state(tiny_checkpoint):
    return torch.load(tiny_checkpoint, map_location="cpu", weights_only=True)


def write_state(path, state):
    torch.save(state, path)
    return path


# --- infer_config ---------------------------------------------------------------------------------


def test_infer_config_recovers_shapes_from_state_dict():
    # head_dim 24 != hidden / heads (16) and intermediate 96 != MiniMind's default: both must come
    # from the shapes, not from defaults
    config = small_config(layers=3, vocab=130, head_dim=24, intermediate_size=96, positions=64)
    state = MiniMindForCausalLM(config).state_dict()
    inferred = infer_config(state)
    names = "hidden_size num_hidden_layers num_attention_heads num_key_value_heads head_dim"
    names += " intermediate_size vocab_size"
    assert [getattr(inferred, name) for name in names.split()] == [64, 3, 4, 2, 24, 96, 130]


def test_infer_config_takes_non_shape_keys_and_agreeing_shapes_from_overrides(tiny_state):
    config = infer_config(tiny_state, {"rope_theta": 10000.0, "max_position_embeddings": 256})
    assert (config.rope_theta, config.max_position_embeddings) == (10000.0, 256)
    assert infer_config(tiny_state, {"hidden_size": 64, "num_key_value_heads": 2}).hidden_size == 64


def test_config_override_that_conflicts_with_shapes_is_an_error(tiny_state):
    with pytest.raises(MminferError, match="hidden_size=128 but the checkpoint has 64") as info:
        infer_config(tiny_state, {"hidden_size": 128, "num_key_value_heads": 4}, path="x.pth")
    assert "num_key_value_heads=4 but the checkpoint has 2" in str(info.value)
    assert "config key 'model'" in str(info.value)


def test_conflicting_override_fails_load_model(load_tiny):
    with pytest.raises(MminferError, match="num_hidden_layers=8"):
        load_tiny(overrides={"num_hidden_layers": 8})


def test_state_dict_of_something_else_is_not_a_minimind_model(tmp_path):
    with pytest.raises(MminferError, match="does not look like a MiniMind model"):
        infer_config({"weight": torch.zeros(2, 2)}, path=tmp_path / "x.pth")


# --- read_state_dict ------------------------------------------------------------------------------


def test_a_truncated_checkpoint_or_a_pickled_list_is_an_error_naming_the_path(
    tiny_checkpoint, tmp_path
):
    data = tiny_checkpoint.read_bytes()
    truncated = tmp_path / "truncated.pth"
    truncated.write_bytes(data[: len(data) // 2])
    with pytest.raises(MminferError, match=f"{truncated}.*could not be read"):
        read_state_dict(truncated)
    path = write_state(tmp_path / "list.pth", [torch.zeros(2), torch.ones(2)])
    with pytest.raises(MminferError, match=f"{path}.*not a state_dict"):
        read_state_dict(path)


def test_training_resume_file_points_to_its_model_entry(tmp_path, tiny_state):
    path = write_state(tmp_path / "resume.pth", {"model": dict(tiny_state), "epoch": 3})
    with pytest.raises(MminferError, match="'model' entry"):
        read_state_dict(path)


def test_missing_checkpoint_is_an_error(tmp_path):
    with pytest.raises(MminferError, match="does not exist"):
        read_state_dict(tmp_path / "nothing.pth")


def test_state_dict_round_trips_through_save(tiny_model, tmp_path):
    path = tmp_path / "sub" / "again.pth"
    save_state_dict(tiny_model, path)
    state = read_state_dict(path)
    assert set(state) == set(tiny_model.state_dict())
    assert all(torch.equal(state[k], v) for k, v in tiny_model.state_dict().items())
    assert [p.name for p in path.parent.iterdir()] == ["again.pth"]  # no temp file left


def safetensors_folder(state, folder, config: dict):
    """A transformers folder: model.safetensors (a tied head saved once) and config.json."""
    from safetensors.torch import save_file

    folder.mkdir()
    save_file(
        {k: v.clone() for k, v in state.items() if k != "lm_head.weight"},
        str(folder / "model.safetensors"),
    )
    (folder / "config.json").write_text(json.dumps(config))
    return folder


def test_transformers_folder_loads_with_tied_head_and_config_json(tiny_state, load_tiny, tmp_path):
    config = {"rope_theta": 5000.0, "max_position_embeddings": 128}
    loaded = load_model(safetensors_folder(tiny_state, tmp_path / "hf", config))
    assert loaded.config.rope_theta == 5000.0
    assert loaded.config.max_position_embeddings == 128
    assert torch.equal(loaded.model.lm_head.weight, tiny_state["lm_head.weight"])
    # the same weights as a .pth give the same logits
    folder = safetensors_folder(tiny_state, tmp_path / "twin", {"max_position_embeddings": 512})
    ids = torch.tensor([[1, 40, 7, 300, 12, 3, 99, 250, 41, 17, 5, 6]])
    from_pth = load_tiny(path=write_state(tmp_path / "twin.pth", tiny_state)).model(ids).logits
    assert torch.equal(from_pth, load_model(folder).model(ids).logits)


def folder_with_config_json(tiny_state, folder, config_bytes: bytes):
    """A MiniMind convert_model.py folder (pytorch_model.bin) with the given config.json."""
    folder.mkdir()
    torch.save(dict(tiny_state), folder / "pytorch_model.bin")
    (folder / "config.json").write_bytes(config_bytes)
    return folder


@pytest.mark.parametrize(
    "text, said",
    [
        (
            b'{"rope_theta": 1e6,',
            "config.json is not valid JSON.*line 1.*expected a JSON object of",
        ),
        (b"[1, 2]", "config.json holds a list; expected a JSON object"),
        (b'{"name": "\xff"}', "config.json is not UTF-8 text"),
    ],
)
def test_a_folders_bad_config_json_is_named(tiny_state, tmp_path, text, said):
    folder = folder_with_config_json(tiny_state, tmp_path / "hf", text)
    with pytest.raises(MminferError, match=f"{folder}/{said}"):
        load_model(folder)


def test_saved_checkpoint_gets_the_mode_of_a_plain_open(tiny_model, tmp_path, umask):
    umask(0o022)
    save_state_dict(tiny_model, tmp_path / "pretrain.pth")
    assert (tmp_path / "pretrain.pth").stat().st_mode & 0o777 == 0o644


# --- strict keys ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "key, said",
    [("model.layers.1.mlp.up_proj.weight", "missing"), ("value_head.weight", "unexpected")],
)
def test_a_checkpoint_with_a_missing_or_extra_key_lists_it(
    tiny_state, load_tiny, tmp_path, key, said
):
    state = dict(tiny_state)
    if state.pop(key, None) is None:
        state[key] = torch.zeros(1, 64)
    path = write_state(tmp_path / "keys.pth", state)
    with pytest.raises(MminferError, match=f"{path}(.|\\n)*{said}: {key}"):
        load_tiny(path=path)


def test_check_keys_reports_wrong_shapes(tiny_state, tiny_model):
    state = dict(tiny_state)
    state["model.norm.weight"] = torch.ones(65)
    with pytest.raises(
        MminferError, match=r"wrong shape: model.norm.weight \(65,\) \(expected \(64,\)\)"
    ):
        check_keys(state, tiny_model, "x.pth")


# --- load_model, backends, dtypes ----------------------------------------------------------------


def test_loaded_model_has_the_checkpoint_weights_and_is_in_eval_mode(tiny_loaded, tiny_state):
    assert tiny_loaded.backend == "builtin"
    assert tiny_loaded.model.training is False
    loaded = tiny_loaded.model.state_dict()
    assert all(torch.equal(loaded[k], v) for k, v in tiny_state.items())


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_embeddings_are_tied_after_load(load_tiny, dtype):
    model = load_tiny(dtype=dtype).model
    assert model.lm_head.weight is model.model.embed_tokens.weight
    assert model.lm_head.weight.dtype == getattr(torch, dtype)


def test_a_backend_is_chosen_by_the_key_and_the_source_given(tmp_path, load_tiny):
    assert choose_backend("auto", None) == "builtin"
    assert choose_backend("auto", tmp_path) == "builtin"  # a folder without model/model_minimind.py
    assert load_tiny(backend="auto", minimind_src=tmp_path).backend == "builtin"
    assert choose_backend("builtin", "/opt/minimind") == "builtin"
    assert choose_backend("minimind", tmp_path) == "minimind"
    with pytest.raises(MminferError, match="config key 'backend'.*auto, minimind, builtin"):
        choose_backend("foo", None)
    with pytest.raises(MminferError, match="minimind_src"):  # minimind without its source
        load_tiny(backend="minimind", minimind_src=tmp_path)


def test_an_unknown_dtype_or_device_is_an_error_naming_its_key():
    with pytest.raises(MminferError, match="config key 'dtype'"):
        resolve_dtype("float8")
    assert resolve_dtype("bfloat16") is torch.bfloat16
    with pytest.raises(MminferError, match="config key 'device'"):
        resolve_device("tpu")
    assert resolve_device("cpu") == torch.device("cpu")


def test_forward_past_max_positions_is_an_error(tiny_model):
    too_long = torch.ones(1, tiny_model.config.max_position_embeddings + 1, dtype=torch.long)
    with pytest.raises(ValueError, match="max_position_embeddings"):
        tiny_model(too_long)


def test_minimind_backend_loads_the_checkpoint_with_tied_embeddings(
    load_tiny, minimind_src, tiny_state
):
    assert choose_backend("auto", minimind_src) == "minimind"
    loaded = load_tiny(backend="auto", minimind_src=minimind_src)
    assert loaded.backend == "minimind"
    assert loaded.model.training is False
    assert loaded.model.lm_head.weight is loaded.model.model.embed_tokens.weight
    state = loaded.model.state_dict()
    assert all(torch.equal(state[k], v) for k, v in tiny_state.items())


def test_half_precision_checkpoint_loads_into_a_float32_model(tiny_state, load_tiny, tmp_path):
    # MiniMind's trainers save {k: v.half()}; loading must convert, not fail
    path = write_state(tmp_path / "half.pth", {k: v.half() for k, v in tiny_state.items()})
    loaded = load_tiny(path=path)
    weight = loaded.model.model.layers[0].self_attn.q_proj.weight
    assert weight.dtype == torch.float32
    assert torch.equal(weight, tiny_state["model.layers.0.self_attn.q_proj.weight"].half().float())


@pytest.mark.skipif(
    torch.cuda.is_available(), reason="checks the message shown when CUDA is absent"
)
def test_cuda_device_without_cuda_is_an_error():
    with pytest.raises(MminferError, match="config key 'device' is 'cuda'"):
        resolve_device("cuda")
    assert resolve_device("auto") == torch.device("cpu")


def test_minimind_convert_model_folder_with_pytorch_model_bin_loads(tiny_state, tmp_path):
    folder = tmp_path / "converted"
    folder.mkdir()
    torch.save({k: v.half() for k, v in tiny_state.items()}, folder / "pytorch_model.bin")
    (folder / "config.json").write_text(
        json.dumps({"max_position_embeddings": 512, "rope_scaling": None})
    )
    loaded = load_model(folder)
    assert loaded.config.max_position_embeddings == 512
    assert torch.equal(loaded.model.lm_head.weight, tiny_state["lm_head.weight"].half().float())


# --- tied or untied output head -------------------------------------------------------------------


@pytest.fixture(scope="module")
def untied_state(tiny_config):
    """A model of MiniMindConfig(tie_word_embeddings=False), saved as MiniMind's trainers save."""
    torch.manual_seed(11)
    config = MiniMindConfig(**{**tiny_config.to_dict(), "tie_word_embeddings": False})
    model = MiniMindForCausalLM(config)
    return {k: v.half() for k, v in model.state_dict().items()}


def test_untied_checkpoint_loads_its_own_head(untied_state, load_tiny, tmp_path):
    path = write_state(tmp_path / "untied.pth", untied_state)
    loaded = load_tiny(path=path)
    assert loaded.config.tie_word_embeddings is False
    model = loaded.model
    assert model.lm_head.weight is not model.model.embed_tokens.weight
    assert torch.equal(model.lm_head.weight, untied_state["lm_head.weight"].float())
    assert torch.equal(
        model.model.embed_tokens.weight, untied_state["model.embed_tokens.weight"].float()
    )


def test_untied_checkpoint_gives_the_logits_of_the_untied_model(untied_state, load_tiny, tmp_path):
    config = MiniMindConfig(
        **{
            **infer_config(untied_state).to_dict(),
            "tie_word_embeddings": False,
            "max_position_embeddings": 512,
        }
    )
    reference = MiniMindForCausalLM(config)
    reference.load_state_dict({k: v.float() for k, v in untied_state.items()})
    loaded = load_tiny(path=write_state(tmp_path / "untied.pth", untied_state)).model
    ids = torch.tensor([[1, 40, 7, 300, 12]])
    with torch.no_grad():
        assert torch.equal(loaded(ids).logits, reference.eval()(ids).logits)


def test_a_checkpoint_with_an_equal_head_or_only_the_embedding_is_tied(tiny_state):
    assert "lm_head.weight" in tiny_state  # a tied model's state_dict names the shared weight twice
    assert infer_config(tiny_state).tie_word_embeddings is True
    state = {k: v for k, v in tiny_state.items() if k != "lm_head.weight"}
    assert infer_config(state).tie_word_embeddings is True


def test_folder_config_saying_tied_over_an_untied_head_is_an_error(untied_state):
    with pytest.raises(MminferError, match="tie_word_embeddings") as info:
        infer_config(untied_state, {"tie_word_embeddings": True}, path="folder")
    assert "lm_head.weight differs from model.embed_tokens.weight" in str(info.value)


def test_folder_config_saying_untied_without_a_head_is_an_error(tiny_state):
    state = {k: v for k, v in tiny_state.items() if k != "lm_head.weight"}
    with pytest.raises(
        MminferError, match="tie_word_embeddings is false but .* has no lm_head.weight"
    ):
        infer_config(state, {"tie_word_embeddings": False}, path="folder")


def test_minimind_backend_loads_an_untied_head(untied_state, load_tiny, minimind_src, tmp_path):
    path = write_state(tmp_path / "untied.pth", untied_state)
    builtin = load_tiny(path=path).model
    minimind = load_tiny(path=path, backend="minimind", minimind_src=minimind_src).model
    assert minimind.lm_head.weight is not minimind.model.embed_tokens.weight
    ids = torch.tensor([[1, 40, 7, 300, 12]])
    with torch.no_grad():
        assert torch.equal(builtin(ids).logits, minimind(ids).logits)
