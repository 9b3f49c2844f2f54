"""MiniMind's own source, imported from a folder: ``<minimind_src>/model/<module>.py``.

The ``minimind`` backend builds MiniMind's ``MiniMindForCausalLM`` from ``model_minimind.py`` (it
needs transformers) and, for a LoRA, attaches it with ``model_lora.py``'s ``apply_lora``.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from mminfer.errors import MminferError


def import_source(source: str | Path | None, module: str):
    """MiniMind's ``<source>/model/<module>.py``, imported once per process."""
    path = Path(source) / "model" / f"{module}.py" if source else None
    if path is None or not path.is_file():
        raise MminferError(f"config key 'minimind_src': {source}/model/{module}.py does not exist.")
    name = f"_mminfer_minimind_{module}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    loaded = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(loaded)
    except ImportError as exc:
        raise MminferError(
            f"MiniMind's source {path} could not be imported ({exc}); install the optional extra "
            "(pip install 'mminfer[minimind]') or set config key 'backend' to 'builtin'."
        ) from None
    sys.modules[name] = loaded
    return loaded
