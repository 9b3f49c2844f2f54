"""The rule of rules/kvbytes.smk: step 4 of the task, the KV cache's real bytes."""

from __future__ import annotations

import logging

from mminfer import kvcache
from mminfer.loading import ModelSource, open_model, run_info
from mminfer.prompts import check_length
from mminfer.records import write_record

log = logging.getLogger("mminfer")


def kvbytes_job(model: ModelSource, tokens: int, seed: int, out):
    """Step 4 -> kvbytes.json."""
    loaded = open_model(model)
    check_length(tokens, loaded.config.max_position_embeddings, "kvbytes.tokens")
    kv = kvcache.measure_kv_bytes(
        loaded.model, loaded.config, tokens, seed, loaded.device, run_info(loaded)
    )
    log.info(
        "measured_bytes=%d formula_bytes=%d k_shape=%s",
        kv.measured_bytes,
        kv.formula_bytes,
        kv.k_shape,
    )
    write_record(out, kv)
    return kv
