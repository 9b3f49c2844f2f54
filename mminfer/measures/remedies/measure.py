"""What removes the fixed cost per decode step -> remedies.json.

Its own greedy decode loop over the model's modules (mminfer's builtin model, or MiniMind's own
class in the ``minimind`` backend: the same module names), the prompt's prefill by the model's own
forward, then one token per step, each remedy switchable:

- ``in_place_cache``: one (batch, P + N, KV heads, head_dim) tensor per layer for K and for V,
  allocated once and written in place at the step's position (gpt-fast's KVCache, transformers'
  StaticCache), where MiniMind's attention ``torch.cat``s the whole cache every step;
- ``gqa_without_repeat_kv``: attention over the KV heads, the query heads grouped, q as
  (B, KV, G, 1, D) against k and v as (B, KV, 1, S, D), where MiniMind's ``repeat_kv`` copies
  every cached K and V G times every step;
- ``all``: both; ``loop``: neither (the control: what the own loop saves by itself; each
  remedy's own saving is against it, in the same rounds, beside its saving against MiniMind);
- ``compile``: ``torch.compile`` of the one-token step over the in-place cache, on by default,
  probed first in a subprocess (a machine without a compiler records the reason, and it does not
  apply). Its first generation, compiling included and the compiler's caches empty (as a first run
  finds them), is timed by the device's clock: what it took
  beyond the compiled side's timed runs is the compile's cost, and over the saving per step, the
  tokens that pay it back (remedies.json's ``compile_cost``).

Each remedy's greedy ids are compared with MiniMind's ``generate`` (the task's greedy arguments);
that run of each side is its warm-up. Then one interleaved timing (mminfer.timing.ab.time_sides):
each round runs every side once, MiniMind's cached generate, each remedy whose ids agree, generate
without the cache and without it at ``logits_to_keep=1`` (MiniMind's forward takes it), in an
order that turns from round to round; each remedy is paired round by round with the same round's
cached generate, ``logits_to_keep=1`` with the uncached one (reported apart); more rounds of the
sides of each pair still undecided, up to time.max_runs.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import logging
import math
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from mminfer.measures.remedies.decide import compile_cost_of, own_saves_of, saves_of
from mminfer.measures.remedies.remedies import (
    CONTROL,
    REMEDIES,
    KeepTiming,
    Remedies,
    Remedy,
    saved_interval,
)
from mminfer.model.generation import GREEDY, first_divergence
from mminfer.model.twin import apply_rotary, repeat_kv
from mminfer.records import RunInfo
from mminfer.records.interval import look_level, median_interval, rounds_decision
from mminfer.timing.ab import (
    A_SPREAD,
    B_SPREAD,
    ABTiming,
    Rounds,
    Sides,
    SidesTiming,
    ab_record,
    time_sides,
)
from mminfer.timing.clock import clock_name, device_clock
from mminfer.timing.machine import phase

REMEDY_SIDES = Sides(  # the remedy as side a, MiniMind's generate as side b
    doubts={A_SPREAD: "remedy_spread", B_SPREAD: "minimind_spread"},
    contradictions=(),
)
# The sides besides the remedies: MiniMind's generate with the cache (every remedy's pair), without
# it, and without it at logits_to_keep=1 (paired with the one before).
CACHED, UNCACHED, KEPT = "minimind", "minimind_without_cache", "logits_to_keep"
# The switches of each remedy: (in-place cache, grouped attention, compiled step).
SWITCHES = {
    "loop": (False, False, False),
    "in_place_cache": (True, False, False),
    "gqa_without_repeat_kv": (False, True, False),
    "all": (True, True, False),
    "compile": (True, True, True),
}
PROBE = (
    "import torch; f = torch.compile(lambda x: x * 2 + 1); "
    "assert float(f(torch.ones(2)).sum()) == 6.0"
)


@dataclass(frozen=True)
class RemedySettings:
    """Config section remedies: whether torch.compile is tried, and the command that probes it."""

    compile: bool  # config key remedies.compile
    probe: tuple[str, ...] = (sys.executable, "-c", PROBE)


class ConcatCache:
    """MiniMind's cache: each step's K and V ``torch.cat``'d onto the cached ones."""

    def __init__(self, presents):
        self.layers = [list(kv) for kv in presents]

    def update(self, layer: int, k, v, position: int):
        cached = self.layers[layer]
        cached[0] = torch.cat([cached[0], k], dim=1)
        cached[1] = torch.cat([cached[1], v], dim=1)
        return cached[0], cached[1]


class InPlaceCache:
    """One tensor per layer for K and V, (batch, positions, KV heads, head_dim), allocated once;
    a step writes its position in place and attends over the view up to it."""

    def __init__(self, presents, positions: int):
        self.keys, self.values = [], []
        for k, v in presents:
            shape = (k.shape[0], positions, *k.shape[2:])
            self.keys.append(k.new_zeros(shape))
            self.values.append(v.new_zeros(shape))
            self.keys[-1][:, : k.shape[1]] = k
            self.values[-1][:, : v.shape[1]] = v

    def update(self, layer: int, k, v, position: int):
        self.keys[layer][:, position : position + 1] = k
        self.values[layer][:, position : position + 1] = v
        return self.keys[layer][:, : position + 1], self.values[layer][:, : position + 1]


def attend_repeated(q, keys, values, groups: int):
    """MiniMind's one-token attention: K and V repeated to every query head (repeat_kv)."""
    q = q.transpose(1, 2)  # (b, heads, 1, d)
    k = repeat_kv(keys, groups).transpose(1, 2)  # (b, heads, s, d)
    v = repeat_kv(values, groups).transpose(1, 2)
    scores = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
    out = F.softmax(scores.float(), dim=-1).type_as(q) @ v  # (b, heads, 1, d)
    return out.transpose(1, 2).reshape(q.shape[0], 1, -1)


def attend_grouped(q, keys, values, groups: int):
    """The same attention over the KV heads: q (b, kv, g, 1, d) against k, v (b, kv, 1, s, d);
    query head h = kv * g + its index in the group, as repeat_kv pairs them."""
    batch, _, heads, dim = q.shape
    q = q.view(batch, heads // groups, groups, 1, dim)
    k = keys.permute(0, 2, 1, 3).unsqueeze(2)  # (b, kv, 1, s, d): a view, nothing copied
    v = values.permute(0, 2, 1, 3).unsqueeze(2)
    scores = (q @ k.transpose(-2, -1)) / math.sqrt(dim)  # (b, kv, g, 1, s)
    out = F.softmax(scores.float(), dim=-1).type_as(q) @ v  # (b, kv, g, 1, d)
    return out.reshape(batch, 1, heads * dim)


def decode_step(model, token, position: int, cache, attend: Callable):
    """One token through the model's modules at ``position``: its (batch, vocab) logits."""
    inner = model.model
    config = model.config
    heads, kv_heads = config.num_attention_heads, config.num_key_value_heads
    dim = config.head_dim
    cos = inner.freqs_cos[position : position + 1]
    sin = inner.freqs_sin[position : position + 1]
    hidden = inner.embed_tokens(token)  # (b, 1, hidden)
    batch = hidden.shape[0]
    for index, layer in enumerate(inner.layers):
        attn = layer.self_attn
        x = layer.input_layernorm(hidden)
        q = attn.q_norm(attn.q_proj(x).view(batch, 1, heads, dim))
        k = attn.k_norm(attn.k_proj(x).view(batch, 1, kv_heads, dim))
        v = attn.v_proj(x).view(batch, 1, kv_heads, dim)
        q, k = apply_rotary(q, k, cos, sin)
        keys, values = cache.update(index, k, v, position)
        hidden = hidden + attn.o_proj(attend(q, keys, values, heads // kv_heads))
        hidden = hidden + layer.mlp(layer.post_attention_layernorm(hidden))
    return model.lm_head(inner.norm(hidden))[:, -1, :]


def own_decoder(model, *, in_place: bool, grouped: bool, compiled: bool = False):
    """A greedy generation function ``decode(input_ids, new_tokens) -> new ids (1, N)`` with the
    remedies switched on."""
    attend = attend_grouped if grouped else attend_repeated
    step = decode_step
    if compiled:
        step = torch.compile(decode_step, dynamic=True)

    @torch.inference_mode()
    def decode(input_ids, new_tokens: int):
        prompt_len = input_ids.shape[1]
        out = model(input_ids, use_cache=True)
        token = out.logits[:, -1, :].argmax(dim=-1, keepdim=True)
        tokens = [token]
        if in_place:
            cache = InPlaceCache(out.past_key_values, prompt_len + new_tokens)
        else:
            cache = ConcatCache(out.past_key_values)
        for position in range(prompt_len, prompt_len + new_tokens - 1):
            logits = step(model, token, position, cache, attend)
            token = logits.argmax(dim=-1, keepdim=True)
            tokens.append(token)
        return torch.cat(tokens, dim=-1)

    return decode


@contextmanager
def empty_compiler_cache():
    """torch.compile's on-disk caches (inductor's and Triton's) in a new, empty folder while
    inside, so that the first compiled call pays what a first run pays: the compiled kernels an
    earlier run left behind (in /tmp/torchinductor_<user> by default) would hide most of it."""
    names = ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR")
    before = {name: os.environ.get(name) for name in names}
    with tempfile.TemporaryDirectory(prefix="mminfer-compile-") as folder:
        for name in names:
            os.environ[name] = os.path.join(folder, name.lower())
        try:
            yield
        finally:
            for name, value in before.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value


def probe_compiler(command) -> str | None:
    """None where ``command`` (a torch.compile of a tiny function, in a subprocess) succeeds; the
    reason it failed otherwise: its last line of output, or its timeout."""
    try:
        done = subprocess.run(list(command), capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"the probe did not run: {exc}"
    if done.returncode == 0:
        return None
    lines = (done.stderr or done.stdout).strip().splitlines() or [f"exit {done.returncode}"]
    return f"torch.compile's probe failed: {lines[-1][:300]}"


def skipped(name: str, reason: str) -> Remedy:
    return Remedy(
        name=name,
        applies=False,
        reason=reason,
        same_ids=None,
        first_divergence=None,
        remedy_runs_s=[],
        minimind_runs_s=[],
        runs=0,
        max_runs=0,
        remedy_interval=None,
        minimind_interval=None,
        saved_per_step_interval=None,
        speedup_interval=None,
        saves=None,
        speedup_after=None,
        verdict=None,
        contention=None,
    )


def takes_logits_to_keep(model) -> bool:
    return "logits_to_keep" in inspect.signature(model.forward).parameters


def measure_remedies(
    *,
    model,
    prompt_ids: list[int],
    new_tokens: int,
    rounds: Rounds,
    settings: RemedySettings,
    device,
    run: RunInfo,
) -> Remedies:
    """remedies.json (see the module's docstring): every side's check, which is its warm-up, then
    one interleaved timing of every side (mminfer.timing.ab.time_sides)."""
    input_ids = torch.tensor([prompt_ids], dtype=torch.long, device=device)
    prompt_len = len(prompt_ids)

    def minimind(use_cache: bool = True, **kwargs):
        return model.generate(
            input_ids, max_new_tokens=new_tokens, use_cache=use_cache, **GREEDY, **kwargs
        )[:, prompt_len:]

    # a compile as a first run pays it, whatever earlier runs left in the compiler's caches
    with empty_compiler_cache():
        keeps = takes_logits_to_keep(model)
        with phase("checks", "one generation of every side (its ids and its warm-up)"):
            reference = minimind().tolist()[0]
            minimind(use_cache=False)  # the uncached side's warm-up: the same work as its runs
            clock = device_clock(device)
            remedies, work, first_call_s = checked_remedies(
                model, input_ids, new_tokens, reference, settings, clock
            )
            kept = minimind(use_cache=False, logits_to_keep=1).tolist()[0] if keeps else None
        work = {CACHED: minimind, **work, UNCACHED: functools.partial(minimind, use_cache=False)}
        pairs = [(name, CACHED) for name in remedies if name in work]
        # each remedy against the control too: its own saving, in the same rounds
        if CONTROL in work:
            pairs += [(name, CONTROL) for name in remedies if name in work and name != CONTROL]
        if keeps:
            work[KEPT] = functools.partial(minimind, use_cache=False, logits_to_keep=1)
            pairs.append((KEPT, UNCACHED))
        with phase("rounds", f"{len(work)} sides a round: {', '.join(work)}"):
            timed = time_sides(work=work, pairs=pairs, device=device, rounds=rounds, warmup=0)
    logging.getLogger("mminfer").info("rounds: %d (%d asked for)", len(timed.rounds_s), rounds.runs)
    without_cache_s = statistics.median(timed.runs_of(UNCACHED))
    with_cache_s = statistics.median(timed.runs_of(CACHED))
    for name in remedies:
        if name in work:
            control = None
            if CONTROL in work and name != CONTROL:
                control = pair_of(timed, name, CONTROL)
            remedies[name] = remedy_of(
                name,
                pair_of(timed, name, CACHED),
                steps=len(reference),
                without_cache_s=without_cache_s,
                control=control,
            )
    cost = None
    if first_call_s is not None and "compile" in work:
        cost = compile_cost_of(first_call_s, remedies["compile"], len(reference))
    return Remedies(
        prompt_len=prompt_len,
        new_tokens=new_tokens,
        token_ratio=tokens_fed(prompt_len, new_tokens, False) / tokens_fed(prompt_len, new_tokens),
        without_cache_s=without_cache_s,
        without_cache_runs_s=timed.runs_of(UNCACHED),
        with_cache_s=with_cache_s,
        remedies=remedies,
        compile_asked=settings.compile,
        logits_to_keep=keep_of(
            pair_of(timed, KEPT, UNCACHED), same_ids=kept == reference, cached_s=with_cache_s
        )
        if keeps
        else None,
        clock=clock_name(),
        threads=torch.get_num_threads(),
        run=run,
        compile_cost=cost,
    )


def checked_remedies(
    model, input_ids, new_tokens: int, reference: list[int], settings, clock: Callable
):
    """Every remedy's greedy ids against MiniMind's ``reference``: {name: its record so far}
    (not applying, or ids that part: not timed; the rest filled in once timed), the decode of
    each one to time, whose run here was its warm-up, and the compiled remedy's first run's
    seconds by ``clock`` (compiling included; None where it did not run)."""
    reason = probe_compiler(settings.probe) if settings.compile else None
    remedies, work, first_call_s = {}, {}, None
    for name in REMEDIES:
        in_place, grouped, compiled = SWITCHES[name]
        if compiled and not settings.compile:
            remedies[name] = skipped(name, "off: config key remedies.compile is false")
            continue
        if compiled and reason is not None:
            remedies[name] = skipped(name, reason)
            continue
        decoder = own_decoder(model, in_place=in_place, grouped=grouped, compiled=compiled)
        decode = functools.partial(decoder, input_ids, new_tokens)
        start = clock()
        ids = decode().tolist()[0]
        if compiled:
            first_call_s = clock() - start
        parted = first_divergence(ids, reference)
        remedies[name] = skipped(name, None)  # a remedy whose ids part is not timed
        remedies[name].applies, remedies[name].same_ids = True, parted is None
        remedies[name].first_divergence = parted
        if parted is None:
            work[name] = decode
    return remedies, work, first_call_s


def pair_of(timed: SidesTiming, a: str, b: str) -> ABTiming:
    """The A/B record of sides ``a`` and ``b`` of one interleaved timing: their runs paired by
    round, the level of the timing's looks, its contention."""
    a_runs_s, b_runs_s = timed.paired(a, b)
    record = ab_record(
        a_runs_s=a_runs_s,
        b_runs_s=b_runs_s,
        a_warmup_s=[],
        b_warmup_s=[],
        sides=REMEDY_SIDES,
        runs=timed.runs,
        max_runs=timed.max_runs,
        meter=None,
    )
    return dataclasses.replace(record, contention=timed.contention)


def tokens_fed(prompt_len: int, new_tokens: int, use_cache: bool = True) -> int:
    """The tokens forward is fed in one generation: the prompt, then one per step with the cache;
    the whole sequence every step without it."""
    if use_cache:
        return prompt_len + new_tokens - 1
    return sum(prompt_len + k for k in range(new_tokens))


def remedy_of(
    name: str,
    timed: ABTiming,
    *,
    steps: int,
    without_cache_s: float,
    control: ABTiming | None = None,
) -> Remedy:
    """A remedy's record from its A/B timing against MiniMind's cached generate (the remedy as
    side a), its ids MiniMind's; ``control``: its A/B timing against the control loop in the same
    rounds (None for the control itself)."""
    level = look_level(timed.runs, timed.max_runs)
    own = {}
    if control is not None:  # the rounds both ran: those of its pairing with the control
        runs = {"control_runs_s": control.b_runs_s, "own_runs_s": control.a_runs_s}
        own = runs | {
            "own_saved_per_step_interval": saved_interval(
                control.b_runs_s, control.a_runs_s, steps, level
            )
        }
    remedy = Remedy(
        name=name,
        applies=True,
        reason=None,
        same_ids=True,
        first_divergence=None,
        remedy_runs_s=timed.a_runs_s,
        minimind_runs_s=timed.b_runs_s,
        runs=timed.runs,
        max_runs=timed.max_runs,
        remedy_interval=timed.a_interval,
        minimind_interval=timed.b_interval,
        saved_per_step_interval=saved_interval(timed.b_runs_s, timed.a_runs_s, steps, level),
        speedup_interval=timed.ratio_interval,
        saves=None,
        speedup_after=without_cache_s / timed.a_s,
        verdict=timed.verdict,
        contention=timed.contention,
        **own,
    )
    # the decisions the sentences and the checker make, made by the same functions
    remedy.saves, remedy.own_saves = saves_of(remedy), own_saves_of(remedy)
    return remedy


def keep_of(timed: ABTiming, *, same_ids: bool, cached_s: float) -> KeepTiming:
    """logits_to_keep=1's record from its A/B timing (kept as side a)."""
    level = look_level(timed.runs, timed.max_runs)
    saved = [b - a for a, b in zip(timed.a_runs_s, timed.b_runs_s)]
    return KeepTiming(
        same_ids=same_ids,
        kept_runs_s=timed.a_runs_s,
        full_runs_s=timed.b_runs_s,
        runs=timed.runs,
        max_runs=timed.max_runs,
        saved_interval=median_interval(saved, level),
        speedup_interval=timed.ratio_interval,
        saves=rounds_decision(timed.b_runs_s, timed.a_runs_s, timed.runs, timed.max_runs),
        speedup_after=timed.a_s / cached_s,
        contention=timed.contention,
    )
