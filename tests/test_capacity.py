"""What fits on a card: bytes per cached token per dtype, the weights' bytes, the capacity table,
and a real batch cache against its prediction (mminfer.measures.capacity.measure)."""

from __future__ import annotations

import json

import pytest
import torch

from mminfer.measures.capacity.capacity import Capacity
from mminfer.measures.capacity.measure import (
    CapacitySettings,
    bytes_per_token,
    capacity,
    capacity_table,
    weight_bytes,
)
from mminfer.measures.kvbytes.measure import measure_kv_bytes
from mminfer.model.loading import count_parameters
from mminfer.model.twin import MiniMindConfig, MiniMindForCausalLM
from mminfer.records import from_json, to_json

# conftest's tiny shape: hidden 64, 2 layers, 4 heads, 2 KV heads -> head_dim 16.
# One cached token in float32: 2 (K, V) x 2 layers x 2 KV heads x 16 x 4 bytes = 512 bytes.
TINY_BYTES_PER_TOKEN_FLOAT32 = 512
MIB = 2**20


# float32: free = 1024 MiB - 100 MiB = 924 MiB = 968,884,224 bytes
#   context 1000: 1024 x 1000 = 1,024,000 bytes a sequence -> floor(946.18) = 946
#   context 4096: 1024 x 4096 = 4 MiB a sequence           -> 924 / 4 = 231
# bfloat16: free = 1024 MiB - 50 MiB = 974 MiB = 1,021,313,024 bytes
#   context 1000: 512,000 bytes a sequence -> floor(1994.75) = 1994
#   context 4096: 2 MiB a sequence         -> 974 / 2 = 487
# 0.05 GiB = 53,687,091 bytes: float32 weights of 100 MiB do not fit; bfloat16 weights of 50 MiB
# leave 53,687,091 - 52,428,800 = 1,258,291 bytes: 2 sequences of 512,000 bytes, none of 2 MiB.
# float16 has no measurement: nothing is made up from the formula.
@pytest.mark.parametrize(
    "memory_gib, per_token, sequences",
    [
        (1, {"float32": 1024, "bfloat16": 512}, [946, 231, 1994, 487]),
        (0.05, {"float32": 1024, "bfloat16": 512}, [0, 0, 2, 0]),
        (1, {"float32": 1024, "float16": None}, [946, 231, None, None]),
    ],
)
def test_capacity_table_matches_hand_computed_rows(memory_gib, per_token, sequences):
    weights = {"float32": 100 * MIB, "bfloat16": 50 * MIB, "float16": MIB}
    rows = capacity_table(
        per_token=per_token,
        weights={dtype: weights[dtype] for dtype in per_token},
        memory_gib=[memory_gib],
        contexts=[1000, 4096],
    )
    assert [row.sequences for row in rows] == sequences
    if memory_gib == 1:
        assert (rows[0].free_bytes, rows[0].kv_bytes_per_sequence) == (968_884_224, 1_024_000)


def test_batch_cache_measured_bytes_equal_the_prediction(tiny_model, tiny_config, tiny_run):
    check = measure_kv_bytes(
        model=tiny_model, config=tiny_config, tokens=10, seed=0, device="cpu", run=tiny_run, batch=3
    )
    # 3 sequences x 10 tokens x 512 bytes = 15,360 bytes
    assert check.formula_bytes == 3 * 10 * TINY_BYTES_PER_TOKEN_FLOAT32 == 15_360
    assert check.measured_bytes == check.formula_bytes
    assert check.matches is True
    assert check.k_shape == [3, 10, 2, 16]


def test_weight_bytes_counts_a_tied_embedding_once(tiny_model, tiny_config):
    hidden, vocab, head_dim = tiny_config.hidden_size, tiny_config.vocab_size, tiny_config.head_dim
    heads, kv_heads = tiny_config.num_attention_heads, tiny_config.num_key_value_heads
    inner = tiny_config.intermediate_size
    per_layer = (
        hidden * heads * head_dim  # q_proj
        + 2 * hidden * kv_heads * head_dim  # k_proj, v_proj
        + heads * head_dim * hidden  # o_proj
        + 2 * head_dim  # q_norm, k_norm
        + 2 * hidden  # the two RMSNorms of the block
        + 3 * hidden * inner
    )  # gate, up, down
    expected = vocab * hidden + tiny_config.num_hidden_layers * per_layer + hidden  # final norm
    assert tiny_model.lm_head.weight is tiny_model.model.embed_tokens.weight
    assert count_parameters(tiny_model) == expected
    assert weight_bytes(tiny_model, "float32") == 4 * expected
    assert weight_bytes(tiny_model, "bfloat16") == 2 * expected

    untied = MiniMindForCausalLM(
        MiniMindConfig(**{**tiny_config.to_dict(), "tie_word_embeddings": False})
    )
    assert weight_bytes(untied, "float32") == 4 * (expected + vocab * hidden)


def test_bytes_per_token_are_measured_in_every_dtype(tiny_model, tiny_config):
    result = bytes_per_token(tiny_model, tiny_config, "cpu", tokens=4)
    assert result["float32"].measured == result["float32"].formula == 512
    assert result["bfloat16"].measured == result["bfloat16"].formula == 256
    assert result["float16"].measured == result["float16"].formula == 256
    assert all(entry.matches for entry in result.values())  # the forward ran in every dtype
    assert next(tiny_model.parameters()).dtype == torch.float32  # the shared model was not cast


def test_capacity_json_has_a_row_per_dtype_memory_and_context(tiny_model, tiny_config, tiny_run):
    result = capacity(
        model=tiny_model,
        config=tiny_config,
        device="cpu",
        settings=CapacitySettings(
            memory_gib=[24, 80], contexts=[64, "max"], batch=2, batch_context=8
        ),
        run=tiny_run,
        tokens=4,
    )
    assert result.contexts == [64, tiny_config.max_position_embeddings]
    assert len(result.rows) == 3 * 2 * 2
    assert result.batch_check.matches is True
    dtypes = {"float32", "bfloat16", "float16"}
    assert set(result.bytes_per_token) == set(result.weight_bytes) == dtypes
    row = result.rows[0]
    assert row.sequences == (24 * 2**30 - result.weight_bytes["float32"]) // (512 * 64)
    assert from_json(Capacity, json.loads(json.dumps(to_json(result)))) == result
