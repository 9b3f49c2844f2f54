"""실행 정보, both reports' run section: which model, checkpoints, backend and device.

Its facts read same.json's and temp.json's run blocks; run.md.j2 beside it is its template.
"""

from __future__ import annotations

from pathlib import Path

from mminfer.measures.cache.same import Same
from mminfer.measures.temp.temp import Temperatures
from mminfer.report.sections.run.joins import COURSE_FOLDER


def yarn_of(config: dict) -> str:
    """What MiniMind's YaRN does to this model's angles: "none" (no rope_scaling), "unchanged"
    (a rotary table no longer than the original positions: only attention_factor applies) or
    "scaled"."""
    scaling = config.get("rope_scaling")
    if not scaling:
        return "none"
    if config["max_position_embeddings"] <= scaling["original_max_position_embeddings"]:
        return "unchanged"
    return "scaled"


def run_facts(same: Same, temp: Temperatures) -> dict:
    """Which model, checkpoints, backend and device produced the numbers, from which inputs.

    ``folders`` names the folders the checkpoints came from, as their run blocks record them
    (run.course_folder says whether they lie in the course's folder)."""
    pretrain = same.run
    sft = next(iter(temp.values())).run
    if pretrain.device == "cuda":
        device = pretrain.device_name
    else:
        device = "cpu"
    checkpoints = [pretrain.checkpoint, sft.checkpoint]
    folders = sorted({str(Path(checkpoint).parent) for checkpoint in checkpoints})
    return {
        "pretrain": pretrain,
        "sft": sft,
        "device": device,
        "prompt": same.prompt,
        "yarn": yarn_of(pretrain.config),
        "folders": folders,
        "course_folder": COURSE_FOLDER,
    }
