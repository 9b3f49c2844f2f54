"""MiniMind's released shapes, every switch: mminfer's exact figures equal MiniMind's generate.

Opt-in (minutes of CPU): ``MMINFER_RELEASED_SHAPES=1 MMINFER_MINIMIND_SRC=/path/to/minimind pytest
tests/test_released_shapes.py``. For minimind-3 (hidden 768, 8 layers, 8 query heads over 4 KV
heads) with an untied head, with YaRN and with a rank-16 LoRA on the SFT model, and for
minimind-3-moe (4 experts, top-1), random weights are made by MiniMind's own classes and saved as
its trainers save them. The task's figures (greedy ids with and without the cache, the tokens fed,
the cache's bytes and K's shape, the distinct answers per temperature, the top-p survivors)
computed with MiniMind's own model built with the switch, as eval_llm.py builds it, must equal
what mminfer's measuring functions write through both backends.
"""

from __future__ import annotations

import os
import sys

import pytest
import torch
from shapes import GREEDY

from mminfer.demo.corpus import CorpusSpec, build_corpus, write_corpus
from mminfer.measures.cache.measure import compare_cache
from mminfer.measures.kvbytes.measure import measure_kv_bytes
from mminfer.measures.temp.measure import temperature_experiment
from mminfer.measures.topp.measure import survivors_by_p
from mminfer.model.cachebytes import random_tokens
from mminfer.model.counting import ForwardRecorder
from mminfer.model.draws import Draws, Prompted, next_token_logits
from mminfer.model.loading import ModelSpec, load_model, run_info
from mminfer.model.prompts import chat_prompt, prefix_prompt, task_prompt
from mminfer.model.tokenizer import load_tokenizer
from mminfer.records import ChatPrompt, PretrainPrompt

pytestmark = pytest.mark.skipif(
    not os.environ.get("MMINFER_RELEASED_SHAPES"),
    reason="minutes of CPU: MMINFER_RELEASED_SHAPES=1 MMINFER_MINIMIND_SRC=... pytest "
    "tests/test_released_shapes.py",
)

RELEASED = {"hidden_size": 768, "num_hidden_layers": 8}  # minimind-3; MiniMind's other defaults
VARIANTS = {
    "minimind-3-moe": ({"use_moe": True}, {}, False),
    "untied": ({"tie_word_embeddings": False}, {}, False),
    "yarn": ({"inference_rope_scaling": True}, {"inference_rope_scaling": True}, False),
    "lora": ({}, {}, True),
}
TEMPERATURES = [0.3, 1.0, 1.5]
PS = [0.5, 0.9, 0.99]


@pytest.fixture(scope="module")
def minimind(minimind_src):
    sys.path.insert(0, str(minimind_src))
    from model import model_lora, model_minimind

    return model_minimind, model_lora


@pytest.fixture(scope="module")
def task_inputs(shared_fixtures, tmp_path_factory):
    folder = tmp_path_factory.mktemp("released-data")
    corpus = build_corpus(CorpusSpec(seed=0, train_docs=10, val_docs=20, sft_conversations=10))
    paths = write_corpus(corpus, folder)
    tokenizer = load_tokenizer(shared_fixtures)
    prompt_ids = task_prompt(tokenizer, paths["pretrain_val.jsonl"], 6, 200, 64, 32768, "task")
    question_ids, template = chat_prompt(tokenizer, "가람 마을의 특산물은 무엇인가요?")
    return {
        "tokenizer": tokenizer,
        "prompt_ids": prompt_ids,
        "question_ids": question_ids,
        "template": template,
        "prefix_ids": prefix_prompt(tokenizer, "민수는"),
    }


def reference_figures(model, inputs) -> dict:
    """The task's figures computed with MiniMind's generate directly."""
    tokenizer = inputs["tokenizer"]
    prompt = torch.tensor([inputs["prompt_ids"]])
    ids, fed = {}, {}
    for use_cache in (True, False):
        recorder = ForwardRecorder()
        with recorder.watching(model):
            out = model.generate(prompt, max_new_tokens=64, use_cache=use_cache, **GREEDY)
        ids[use_cache] = out[0, prompt.shape[1] :].tolist()
        fed[use_cache] = sum(recorder.fed_per_call)
    with torch.no_grad():
        cache = model(
            random_tokens(vocab_size=model.config.vocab_size, tokens=100, seed=0), use_cache=True
        ).past_key_values
    distinct = {}
    question = torch.tensor([inputs["question_ids"]])
    eos = tokenizer.eos_token_id
    sampling = {
        "do_sample": True,
        "top_k": 0,
        "top_p": 1.0,
        "max_new_tokens": 24,
        "num_return_sequences": 30,
    }
    for temperature in TEMPERATURES:
        torch.manual_seed(0)
        rows = model.generate(question, temperature=temperature, eos_token_id=eos, **sampling)
        answers = set()
        for row in rows[:, question.shape[1] :].tolist():
            if tokenizer.eos_token_id in row:
                row = row[: row.index(tokenizer.eos_token_id)]
            answers.add(tokenizer.decode(row, skip_special_tokens=False))
        distinct[repr(temperature)] = len(answers)
    with torch.no_grad():
        logits = model(torch.tensor([inputs["prefix_ids"]])).logits[0, -1].float()
    return {
        "same_ids": ids[True] == ids[False],
        "ids": ids[True],
        "fed": [fed[True], fed[False]],
        "measured_bytes": sum(t.numel() * t.element_size() for pair in cache for t in pair),
        "k_shape": list(cache[0][0].shape),
        "distinct": distinct,
        "topp": survivors_by_p(logits, PS),
    }


def mminfer_figures(loaded, sft, inputs) -> dict:
    """The same figures through mminfer's measuring functions, as the rules compute them."""
    tokenizer = inputs["tokenizer"]
    run = run_info(loaded)
    source = PretrainPrompt(tokenizer="fixture", val_data="corpus", docs=6, prompt_tokens=200)
    same, count = compare_cache(
        model=loaded.model,
        prompt_ids=inputs["prompt_ids"],
        new_tokens=64,
        device="cpu",
        tokenizer=tokenizer,
        prompt=source,
        run=run,
    )
    kv = measure_kv_bytes(
        model=loaded.model, config=loaded.config, tokens=100, seed=0, device="cpu", run=run
    )
    chat = ChatPrompt("fixture", inputs["template"], "q", len(inputs["question_ids"]), 0)
    temp = temperature_experiment(
        chat=Prompted(
            model=sft.model,
            tokenizer=tokenizer,
            prompt_ids=inputs["question_ids"],
            prompt=chat,
            device="cpu",
            run=run,
        ),
        temperatures=TEMPERATURES,
        draws=Draws(samples=30, new_tokens=24, seed=0),
    )
    logits = next_token_logits(loaded.model, inputs["prefix_ids"], "cpu")
    return {
        "same_ids": same.same_ids,
        "ids": same.ids,
        "fed": [count.fed_with_cache, count.fed_without_cache],
        "measured_bytes": kv.measured_bytes,
        "k_shape": kv.k_shape,
        "distinct": {key: summary.distinct for key, summary in temp.items()},
        "topp": survivors_by_p(logits, PS),
    }


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_released_shape_figures_equal_minimind_generate(
    variant, minimind, minimind_src, task_inputs, tmp_path
):
    model_minimind, model_lora = minimind
    switches, overrides, with_lora = VARIANTS[variant]

    def minimind_model(seed):
        torch.manual_seed(seed)
        config = model_minimind.MiniMindConfig(**RELEASED, **switches)
        return model_minimind.MiniMindForCausalLM(config)

    trained = minimind_model(0)
    path = tmp_path / f"{variant}.pth"
    torch.save({k: v.half() for k, v in trained.state_dict().items()}, path)  # as trainers save
    lora = None
    if with_lora:
        model_lora.apply_lora(trained)  # rank 16, as train_lora.py
        for module in trained.modules():
            if hasattr(module, "lora"):
                module.lora.B.weight.data.normal_(0.0, 0.02)
        lora = tmp_path / "lora_identity_768.pth"
        model_lora.save_lora(trained, lora)

    reference = minimind_model(1)  # eval_llm.py: build with the switch, load strictly, then LoRA
    reference.load_state_dict(torch.load(path, weights_only=True), strict=True)
    reference_sft = reference
    if with_lora:
        reference_sft = minimind_model(1)
        reference_sft.load_state_dict(torch.load(path, weights_only=True), strict=True)
        model_lora.apply_lora(reference_sft)
        state = torch.load(lora, weights_only=True)
        for name, module in reference_sft.named_modules():
            if hasattr(module, "lora"):
                prefix = f"{name}.lora."
                pairs = {k.replace(prefix, ""): v for k, v in state.items() if prefix in k}
                module.lora.load_state_dict(pairs)
    expected = reference_figures(reference.eval(), task_inputs)
    if with_lora:
        expected["distinct"] = reference_figures(reference_sft.eval(), task_inputs)["distinct"]

    for backend in ("builtin", "minimind"):
        spec = ModelSpec(backend=backend, minimind_src=str(minimind_src), overrides=overrides)
        loaded = load_model(path, spec)
        sft = load_model(path, spec, lora=lora) if with_lora else loaded
        assert mminfer_figures(loaded, sft, task_inputs) == expected, backend
