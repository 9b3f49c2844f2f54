"""The run section beside same.json and temp.json: where the checkpoints came from.

Pure Python, no torch.
"""

from __future__ import annotations

from pathlib import Path

from mminfer.measures.cache.same import Same
from mminfer.measures.temp.temp import Temperatures

COURSE_FOLDER = "/opt/mm"  # where a MiniMind course machine keeps its checkpoints


def course_folder(same: Same, temp: Temperatures) -> str | None:
    """run.course_folder: where the course model set's checkpoints came from, "inside" the
    course's folder (both lie in COURSE_FOLDER) or "elsewhere"; None for another model set."""
    if same.run.model_set != "course":
        return None
    runs = [same.run, next(iter(temp.values())).run]
    inside = all(Path(run.checkpoint).is_relative_to(COURSE_FOLDER) for run in runs)
    return "inside" if inside else "elsewhere"
