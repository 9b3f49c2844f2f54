"""실행 정보, both reports' run section: which model, checkpoints, backend and device.

Its facts read same.json's and temp.json's run blocks; run.md.j2 beside it is its template.
"""

from __future__ import annotations

from pathlib import Path

from mminfer.measures.cache.same import Same
from mminfer.measures.temp.temp import Temperatures
from mminfer.records.sentences import Sentence


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


COURSE_FOLDER = "/opt/mm"  # where a MiniMind course machine keeps its checkpoints


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
    }


def course_folder(same: Same, temp: Temperatures) -> str | None:
    """run.course_folder: where the course model set's checkpoints came from, "inside" the
    course's folder (both lie in COURSE_FOLDER) or "elsewhere"; None for another model set."""
    if same.run.model_set != "course":
        return None
    runs = [same.run, next(iter(temp.values())).run]
    inside = all(Path(run.checkpoint).is_relative_to(COURSE_FOLDER) for run in runs)
    return "inside" if inside else "elsewhere"


# The run section's sentences (run.md.j2 beside): not a measurement's, its own.
SENTENCES = (
    Sentence(
        "run.course_folder",
        holds=course_folder,
        words={
            "inside": "(MiniMind 강의 체크포인트, " + COURSE_FOLDER + ")",
            "elsewhere": '(MiniMind 강의 체크포인트, 읽은 폴더 `{{ folders|join("`, `") }}`)',
        },
        about=lambda: {"folder": COURSE_FOLDER},
    ),
)
