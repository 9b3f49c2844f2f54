"""Nothing from a broken model: NaN or inf in the weights or the logits stops the job, naming the
checkpoint (the tensor, or the dtype and step), and writes no file."""

from __future__ import annotations

import json
import runpy
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from conftest import CHAT_PROMPT, TINY_MAX_POSITIONS

from mminfer.demo.corpus import write_corpus
from mminfer.errors import MminferError
from mminfer.measures.cache import measure as greedy
from mminfer.measures.capacity.measure import CapacitySettings
from mminfer.measures.conversation.conversation import ConversationSettings
from mminfer.measures.serve.measure import ServeSettings
from mminfer.measures.sweep.measure import SweepSettings
from mminfer.measures.temp import measure as temperature
from mminfer.measures.temp.measure import TempSettings
from mminfer.measures.topp import measure as topp_measure
from mminfer.model.draws import Draws, Prompted
from mminfer.model.finite import check_weights, finite_logits
from mminfer.model.loading import ModelSource, ModelSpec, load_model, run_info
from mminfer.model.twin import square_linears
from mminfer.records import PretrainPrompt
from mminfer.timing.ab import Rounds
from mminfer.workflow.inputs import fill_defaults, read_schema

BROKEN = "model.layers.1.mlp.down_proj.weight"  # the tensor given one NaN
SPEC = ModelSpec(
    backend="builtin",
    device="cpu",
    dtype="float32",
    overrides={"max_position_embeddings": TINY_MAX_POSITIONS},
)


def saved_with(checkpoint: Path, path: Path, change) -> Path:
    """A copy of ``checkpoint`` with ``change(state)`` applied to its state_dict."""
    state = torch.load(checkpoint, map_location="cpu", weights_only=True)
    state = {key: value.clone() for key, value in state.items()}
    change(state)
    torch.save(state, path)
    return path


def one_nan(state: dict) -> None:
    state[BROKEN][3, 5] = float("nan")


def overflowing(state: dict) -> None:
    """Finite weights whose first MLP overflows float32: the logits come out NaN."""
    state["model.layers.0.mlp.down_proj.weight"].fill_(3e38)
    state["model.layers.0.mlp.up_proj.weight"].fill_(1.0)


@pytest.fixture(scope="module")
def nan_pretrain(tiny_checkpoint, tmp_path_factory) -> Path:
    return saved_with(tiny_checkpoint, tmp_path_factory.mktemp("nan") / "pretrain.pth", one_nan)


@pytest.fixture(scope="module")
def nan_sft(tiny_sft_checkpoint, tmp_path_factory) -> Path:
    return saved_with(tiny_sft_checkpoint, tmp_path_factory.mktemp("nan-sft") / "sft.pth", one_nan)


@pytest.fixture(scope="module")
def val_data(tiny_corpus, tmp_path_factory) -> Path:
    return write_corpus(tiny_corpus, tmp_path_factory.mktemp("data"))["pretrain_val.jsonl"]


def section(name: str, **small) -> dict:
    """Config section ``name`` at the schema's defaults, with ``small`` over them."""
    return fill_defaults({}, read_schema())[name] | small


SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def script(name: str) -> dict:
    """The functions of rule script scripts/<name>.py, imported as a module (no job runs)."""
    return runpy.run_path(str(SCRIPTS / f"{name}.py"), run_name="rule_script")


def run_job(name: str, checkpoint: Path, tokenizer: Path, val_data: Path, out: Path, spec=SPEC):
    """Run model job ``name`` on ``checkpoint`` as its rule's script would, writing into ``out``."""
    key = "sft" if name in ("temp", "sampler", "conversation") else "pretrain"
    model = ModelSource(checkpoint=checkpoint, spec=spec, threads=None, input_key=key)
    prompt = PretrainPrompt(
        tokenizer=str(tokenizer), val_data=str(val_data), docs=2, prompt_tokens=8
    )
    chat = {"question": CHAT_PROMPT.question, "samples": 3, "new_tokens": 4, "seed": 0}
    chat["chatml_fallback"] = False
    if name == "cache":
        script("cache")["cache"](model, prompt, 4, out / "same.json", out / "count.json")
    elif name == "time":
        script("time_generation")["time_generation"](
            model, prompt, 4, Rounds(0, 1, 1), [2], 1, out / "time.json", out / "latency.json"
        )
    elif name == "kvbytes":
        script("kvbytes")["kvbytes"](model, 16, 0, out / "kvbytes.json")
    elif name == "temp":
        temperature = script("temp")["temperature"]
        settings = TempSettings(temperatures=[0.5, 1.0], **chat)
        temperature(model, tokenizer, settings, out / "temp.json")
    elif name == "sampler":
        # the temp rule's sampler check, at a temperature temp.json does not draw
        temperature = script("temp")["temperature"]
        settings = TempSettings(temperatures=[0.5], **chat)
        sampler = {
            "sampler_temperature": 1.0,
            "second_seed": 1,
            "sampler_out": out / "sampler.json",
        }
        temperature(model, tokenizer, settings, out / "temp.json", **sampler)
    elif name == "topp":
        topp = script("topp")["topp"]
        topp(model, tokenizer, "민수는", "가", [0.5, 0.9], out / "topp.json", out / "d.json")
    elif name == "sweep":
        settings = SweepSettings(**section("sweep", lengths=[2, 4], warmup=0, runs=1))
        script("sweep")["sweep_lengths"](model, prompt, settings, out / "sweep.json")
    elif name == "capacity":
        settings = CapacitySettings(memory_gib=[24], contexts=[16], batch=2, batch_context=16)
        script("capacity")["capacity_of"](model, settings, out / "capacity.json")
    elif name == "conversation":
        small = {"new_tokens": 3, "warmup": 0, "runs": 1, "max_runs": 1, "users": 2}
        small |= {"shared_tokens": 4, "user_prompt_tokens": 6, "user_new_tokens": 2}
        questions = ["가람 마을의 특산물은?", "왜?"]
        settings = ConversationSettings(**section("conversation", questions=questions, **small))
        conversation = script("conversation")["conversation"]
        conversation(model, tokenizer, settings, False, out / "conversation.json")
    elif name == "serve":
        settings = ServeSettings(**section("serve", batches=[1, 2], decode_steps=2, warmup=0))
        script("serve")["serve_batches"](model, prompt, settings, out / "serve.json")
    else:
        raise ValueError(name)


JOBS = ["cache", "time", "kvbytes", "temp", "sampler", "topp", "sweep", "capacity", "serve"]
JOBS += ["conversation"]
LOGITS_JOBS = [job for job in JOBS if job not in ("kvbytes", "capacity")]  # random tokens' cache


@pytest.mark.parametrize(
    "name, broken",
    [(job, "nan_weight") for job in JOBS] + [(job, "overflow") for job in LOGITS_JOBS],
)
def test_every_model_job_stops_on_a_nan_weight_or_overflowing_logits_naming_the_checkpoint(
    name, broken, nan_pretrain, nan_sft, tiny_checkpoint, tiny_tokenizer_dir, val_data, tmp_path
):
    if broken == "nan_weight":
        checkpoint = nan_sft if name in ("temp", "sampler", "conversation") else nan_pretrain
        said = [str(checkpoint), f"weight {BROKEN} holds 1 NaN of"]
    else:
        checkpoint = saved_with(tiny_checkpoint, tmp_path / "overflow.pth", overflowing)
        said = [f"checkpoint {checkpoint} (float32)", "the logits hold", "NaN"]
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(MminferError) as raised:
        run_job(name, checkpoint, tiny_tokenizer_dir, val_data, out)
    assert [part for part in said if part not in str(raised.value)] == []
    assert list(out.iterdir()) == []  # nothing written, not even a temporary file


# --- the weights, as every loader reads them -----------------------------------------------------


def test_the_first_broken_tensor_is_named_with_its_counts():
    state = {
        "a": torch.zeros(4),
        "b": torch.tensor([1.0, float("inf"), float("nan"), float("-inf")]),
        "c": torch.tensor([float("nan")]),
        "ids": torch.tensor([1, 2]),  # integers cannot hold NaN: skipped
    }
    with pytest.raises(MminferError) as raised:
        check_weights(state, "checkpoint x.pth")
    message = str(raised.value)
    assert message.startswith("checkpoint x.pth: weight b holds 1 NaN and 2 inf of 4 values")
    assert "(2 of its 4 tensors hold such values)" in message


def test_finite_weights_pass():
    check_weights({"a": torch.ones(3), "b": torch.zeros(2, dtype=torch.float16)}, "x")


def test_a_transformers_folder_with_a_nan_weight_is_named(tiny_checkpoint, tmp_path):
    from safetensors.torch import save_file

    state = torch.load(tiny_checkpoint, map_location="cpu", weights_only=True)
    state = {key: value.clone() for key, value in state.items() if key != "lm_head.weight"}
    one_nan(state)
    folder = tmp_path / "hf"
    folder.mkdir()
    save_file(state, str(folder / "model.safetensors"))
    (folder / "config.json").write_text(json.dumps({"max_position_embeddings": 512}))
    with pytest.raises(MminferError, match=f"checkpoint {folder}: weight {BROKEN} holds 1 NaN"):
        load_model(folder)


def test_a_lora_file_with_a_nan_is_named(tiny_loaded, tiny_sft_checkpoint, tmp_path):
    pairs = {}
    for name, module in square_linears(tiny_loaded.model).items():
        pairs[f"{name}.lora.A.weight"] = torch.zeros(4, module.in_features).half()
        pairs[f"{name}.lora.B.weight"] = torch.zeros(module.in_features, 4).half()
    broken = next(iter(pairs))
    pairs[broken][0, 0] = float("inf")
    torch.save(pairs, tmp_path / "lora.pth")
    with pytest.raises(MminferError) as raised:
        load_model(tiny_sft_checkpoint, SPEC, lora=tmp_path / "lora.pth")
    message = str(raised.value)
    assert f"--sft-lora: {tmp_path / 'lora.pth'} (the SFT model's LoRA)" in message
    assert f"weight {broken} holds 1 inf of" in message


def test_weights_past_float16_stop_naming_the_dtype_key(tiny_checkpoint, tmp_path):
    def huge(state):
        state[BROKEN][0, 0] = 1e6  # finite in float32, inf in float16 (largest 65504)

    checkpoint = saved_with(tiny_checkpoint, tmp_path / "huge.pth", huge)
    spec = ModelSpec(backend="builtin", dtype="float16", overrides=SPEC.overrides)
    with pytest.raises(MminferError) as raised:
        load_model(checkpoint, spec)
    message = str(raised.value)
    assert f"checkpoint {checkpoint}: weight {BROKEN} holds 1 inf of" in message
    assert "once cast to float16 (config key 'dtype')" in message
    load_model(checkpoint, ModelSpec(backend="builtin", dtype="bfloat16", overrides=SPEC.overrides))


def test_the_job_names_the_config_key_of_the_checkpoint(nan_pretrain, tiny_tokenizer_dir, tmp_path):
    spec = ModelSpec(backend="builtin", overrides=SPEC.overrides, model_set="course")
    model = ModelSource(checkpoint=nan_pretrain, spec=spec, threads=None)
    with pytest.raises(MminferError, match=f"config key 'pretrain': {nan_pretrain}: weight"):
        script("kvbytes")["kvbytes"](model, 16, 0, tmp_path / "kvbytes.json")


# --- the logits, where they become figures -------------------------------------------------------


class NanAfterPrefill(torch.nn.Module):
    """A model whose one-token (cached) steps give NaN logits; the prefill is fine."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, input_ids, *args, **kwargs):
        outputs = self.inner.forward(input_ids, *args, **kwargs)
        if input_ids.shape[1] == 1:
            outputs.logits[..., 0] = float("nan")
        return outputs

    def generate(self, *args, **kwargs):
        return type(self.inner).generate(self, *args, **kwargs)


def test_greedy_comparison_names_the_path_and_step_of_nan_logits(
    tiny_model, tiny_tokenizer, tiny_run
):
    from conftest import PRETRAIN_PROMPT

    model = NanAfterPrefill(tiny_model)
    said = f"checkpoint {tiny_run.checkpoint} \\(float32\\).*with the cache, step 2 of 4.*1 NaN of"
    with pytest.raises(MminferError, match=said):
        greedy.compare_cache(
            model=model,
            prompt_ids=[1, 5, 9, 14],
            new_tokens=4,
            device="cpu",
            tokenizer=tiny_tokenizer,
            prompt=PRETRAIN_PROMPT,
            run=tiny_run,
        )


def test_sampling_stops_before_torch_samples_from_nan(tiny_model, tiny_tokenizer, tiny_run):
    model = NanAfterPrefill(tiny_model)
    with pytest.raises(MminferError) as raised:
        temperature.temperature_experiment(
            chat=Prompted(
                model=model,
                tokenizer=tiny_tokenizer,
                prompt_ids=[1, 5, 9],
                prompt=CHAT_PROMPT,
                device="cpu",
                run=tiny_run,
            ),
            temperatures=[0.7],
            draws=Draws(samples=2, new_tokens=3, seed=0),
        )
    message = str(raised.value)
    assert "sampling at temperature 0.7, step 2 (forward fed 1 tokens)" in message
    assert "probability tensor" not in message


def test_sampler_check_names_the_run_that_met_nan(tiny_model, tiny_tokenizer, tiny_run):
    model = NanAfterPrefill(tiny_model)
    with pytest.raises(MminferError, match="temperature 1.0 with the cache, seed 3, step 2"):
        temperature.sampler_check(
            chat=Prompted(model, tiny_tokenizer, [1, 5, 9], CHAT_PROMPT, "cpu", tiny_run),
            temperature=1.0,
            draws=Draws(samples=2, new_tokens=3, seed=3),
            second_seed=4,
        )


def test_the_watch_on_forward_is_removed_after(tiny_model):
    model = NanAfterPrefill(tiny_model)
    with pytest.raises(MminferError, match="inside"), finite_logits(model, "x"):
        raise MminferError("inside")
    assert "forward" not in vars(model)


def test_topp_names_the_prefix_whose_logits_are_nan(tiny_checkpoint, tiny_tokenizer, tmp_path):
    checkpoint = saved_with(tiny_checkpoint, tmp_path / "overflow.pth", overflowing)
    loaded = load_model(checkpoint, SPEC)
    with pytest.raises(MminferError, match=r"the next token after \[bos\]민수는: the logits hold"):
        topp_measure.topp_detail(
            model=loaded.model,
            tokenizer=tiny_tokenizer,
            prefixes={"open": "민수는"},
            ps=[0.5],
            device="cpu",
            run=run_info(loaded),
        )


def test_a_script_run_by_hand_stops_with_one_paragraph_naming_the_flag(nan_pretrain, tmp_path):
    script = Path(__file__).resolve().parents[1] / "scripts" / "kvbytes.py"
    out = tmp_path / "kvbytes.json"
    result = subprocess.run(
        [sys.executable, str(script), "--pretrain", str(nan_pretrain), "--out", str(out)]
        + ["--backend", "builtin", "--tokens", "8"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1
    assert f"--pretrain: {nan_pretrain}: weight {BROKEN} holds 1 NaN" in result.stderr
    assert "Traceback" not in result.stderr
    assert not out.exists()


@pytest.mark.parametrize("job", ["temp", "cache"])
def test_minimind_backend_is_guarded_alike(
    job, minimind_src, tiny_sft_checkpoint, tiny_tokenizer_dir, val_data, tmp_path
):
    checkpoint = saved_with(tiny_sft_checkpoint, tmp_path / "overflow.pth", overflowing)
    spec = ModelSpec(backend="minimind", minimind_src=str(minimind_src), overrides=SPEC.overrides)
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(MminferError) as raised:
        run_job(job, checkpoint, tiny_tokenizer_dir, val_data, out, spec)
    message = str(raised.value)
    assert f"checkpoint {checkpoint} (float32)" in message and "the logits hold" in message
    if job == "temp":
        assert "sampling at temperature 0.5, step 1 (forward fed" in message
    assert list(out.iterdir()) == []


def test_the_plain_task_stops_before_writing_naming_the_checkpoint(
    nan_pretrain, tiny_sft_checkpoint, tiny_tokenizer_dir, val_data, tmp_path
):
    config = tmp_path / "config.yaml"
    config.write_text(
        json.dumps(  # JSON is YAML
            {
                "pretrain": str(nan_pretrain),
                "sft": str(tiny_sft_checkpoint),
                "val_data": str(val_data),
                "tokenizer": str(tiny_tokenizer_dir),
                "demo": "never",
                "backend": "builtin",
                "cache": {"docs": 2, "prompt_tokens": 8, "new_tokens": 4},
            }
        ),
        encoding="utf-8",
    )
    script = Path(__file__).resolve().parents[1] / "scripts" / "plain_task.py"
    out = tmp_path / "out"
    result = subprocess.run(
        [sys.executable, str(script), "--outdir", str(out), "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1
    assert f"config key 'pretrain': {nan_pretrain}: weight {BROKEN} holds 1 NaN" in result.stderr
    assert "Traceback" not in result.stderr
    assert not out.exists() or list(out.iterdir()) == []
