"""capacity.json: how many sequences' caches fit on a card. Its record and arithmetic."""

from __future__ import annotations

from dataclasses import dataclass

from mminfer.records import RunInfo


@dataclass
class DtypeBytes:
    """One cached token's bytes in one dtype, measured on a real cache."""

    measured: int | None  # None: this dtype's forward failed on the device (error says why)
    formula: int
    matches: bool
    error: str | None


@dataclass
class CapacityRow:
    dtype: str
    memory_gib: float
    context: int
    kv_bytes_per_sequence: int | None
    free_bytes: int
    sequences: int | None


@dataclass
class BatchCheck:
    """A real cache of ``batch`` sequences against the prediction."""

    batch: int
    context: int
    measured_bytes: int
    predicted_bytes: int
    matches: bool
    k_shape: list[int]


@dataclass
class Capacity:
    """capacity.json: how many sequences' caches fit on a card."""

    bytes_per_token: dict[str, DtypeBytes]
    weight_bytes: dict[str, int]  # every parameter in memory, in each dtype
    parameters: int  # all of them: every expert of a MoE model
    active_parameters: int  # those one token runs through
    experts: int | None  # per layer, in a MoE model
    experts_per_token: int | None
    layers: int
    kv_heads: int
    head_dim: int
    memory_gib: list[float]
    contexts: list[int]
    rows: list[CapacityRow]
    batch_check: BatchCheck
    formula: str
    run: RunInfo
