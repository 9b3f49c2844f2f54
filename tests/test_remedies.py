"""remedies.json: the own decode loop's remedies give MiniMind's greedy ids (every kind of model,
both backends); the compile probe's failure is recorded; the sentences follow the raw rounds."""

from __future__ import annotations

import sys

import pytest
import torch
from knob_models import models_of_kind
from shapes import GREEDY, prompt_of, small_config

from mminfer.measures.remedies.measure import (
    SWITCHES,
    RemedySettings,
    measure_remedies,
    own_decoder,
    probe_compiler,
)
from mminfer.model.twin import MiniMindForCausalLM, apply_lora
from mminfer.timing.ab import Rounds

BUILTIN_KINDS = {"dense": {}, "moe": {"use_moe": True}, "yarn": {"inference_rope_scaling": True}}
RUN = Rounds(warmup=0, runs=2, max_runs=2)
TINY = {"prompt_ids": prompt_of(8), "new_tokens": 5, "rounds": RUN, "device": torch.device("cpu")}


def builtin_of(kind: str, lora: bool = False):
    torch.manual_seed(0)
    model = MiniMindForCausalLM(small_config(positions=128, **BUILTIN_KINDS[kind])).eval()
    with torch.no_grad():  # weights wide enough that greedy never settles on one token
        for weight in model.parameters():
            if weight.dim() == 2:
                weight.normal_(0.0, 0.5)
        if lora:
            apply_lora(model, rank=4)
            for module in model.modules():
                if hasattr(module, "lora") and module.lora is not None:
                    module.lora.B.weight.normal_(0.0, 0.3)
    return model


def same_ids_everywhere(model, prompt_len: int = 9, new_tokens: int = 12):
    input_ids = torch.tensor([prompt_of(prompt_len)])
    reference = model.generate(input_ids, max_new_tokens=new_tokens, use_cache=True, **GREEDY)
    for name, (in_place, grouped, compiled) in SWITCHES.items():
        if compiled:
            continue
        decode = own_decoder(model, in_place=in_place, grouped=grouped)
        ids = decode(input_ids, new_tokens)
        assert ids.tolist() == reference[:, prompt_len:].tolist(), name


@pytest.mark.parametrize(
    "kind,lora", [("dense", False), ("moe", False), ("yarn", False), ("dense", True)]
)
def test_every_remedy_gives_minimind_greedy_ids_on_builtin_kinds(kind, lora):
    same_ids_everywhere(builtin_of(kind, lora))


@pytest.mark.parametrize("kind", ["dense", "moe", "lora", "yarn"])
def test_every_remedy_gives_minimind_greedy_ids_in_both_backends(kind, minimind_src, tmp_path):
    reference, backends = models_of_kind(kind, minimind_src, tmp_path)
    for model in (reference, *backends):
        same_ids_everywhere(model)


# a probe that fails (no C++ compiler), and torch.compile's own (slow: seconds of compiling)
COMPILER = pytest.param(RemedySettings(compile=True).probe, marks=pytest.mark.slow)
PROBES = [(sys.executable, "-c", "raise SystemExit('no cc')"), COMPILER]


@pytest.mark.parametrize("probe", PROBES)
def test_the_record_holds_every_remedy_and_compile_where_probed(probe, tiny_model, tiny_run):
    reason = probe_compiler(probe)  # a machine without a compiler skips the side, saying why
    settings = RemedySettings(compile=True, probe=probe)
    record = measure_remedies(model=tiny_model, settings=settings, run=tiny_run, **TINY)
    ran = {name: r for name, r in record.remedies.items() if r.applies}
    assert set(ran) == set(SWITCHES) - ({"compile"} if reason else set())
    assert all(r.same_ids and len(r.remedy_runs_s) == 2 for r in ran.values())
    assert record.logits_to_keep.same_ids and record.token_ratio > 1
    compiled, cost = record.remedies["compile"], record.compile_cost
    assert (reason in compiled.reason and cost is None) if reason else cost.first_call_s > 0


def test_the_probe_passes_where_its_command_does_and_names_why_not():
    assert probe_compiler((sys.executable, "-c", "pass")) is None
    assert "exit 3" in probe_compiler((sys.executable, "-c", "import sys; sys.exit(3)"))
    assert "did not run" in probe_compiler(("/nonexistent/python",))
