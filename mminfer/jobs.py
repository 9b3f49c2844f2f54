"""One function per workflow rule: read the inputs, measure, write the outputs.

These know nothing of Snakemake: the scripts in ``scripts/`` turn the ``snakemake`` object (or
command-line flags) into these arguments. Each function logs what it does with ``logging`` and writes
its JSON atomically, so a failed job leaves no output behind.
"""

from __future__ import annotations

import logging
import platform
from dataclasses import dataclass, field

import torch

from mminfer import greedy, kvcache, prompts, sampling, timing
from mminfer.errors import MminferError
from mminfer.io import sha256_of, write_json
from mminfer.loading import LoadedModel, dtype_name, load_model
from mminfer.tokenizer import check_vocab_fits, load_tokenizer

log = logging.getLogger("mminfer")


@dataclass
class ModelSpec:
    """Which checkpoint to load and how: the config keys backend, minimind_src, device, dtype, model."""

    checkpoint: str
    backend: str = "auto"
    minimind_src: str | None = None
    device: str = "auto"
    dtype: str = "float32"
    overrides: dict = field(default_factory=dict)
    model_set: str = "custom"  # "course", "demo" or a name from config key 'models'
    threads: int | None = None  # torch's CPU threads: the rule's `threads` (None: torch's default)


def load(spec: ModelSpec) -> LoadedModel:
    set_threads(spec.threads)  # before any torch work: two 1-thread jobs must not each take every core
    loaded = load_model(spec.checkpoint, backend=spec.backend, minimind_src=spec.minimind_src,
                        device=spec.device, dtype=spec.dtype, overrides=spec.overrides)
    config = loaded.config
    log.info("loaded %s with backend %s on %s (%s): %d layers, hidden %d, heads %d, kv heads %d, head_dim %d, vocab %d",
             spec.checkpoint, loaded.backend, loaded.device, dtype_name(loaded.dtype),
             config.num_hidden_layers, config.hidden_size, config.num_attention_heads,
             config.num_key_value_heads, config.head_dim, config.vocab_size)
    return loaded


def run_info(spec: ModelSpec, loaded: LoadedModel) -> dict:
    """Provenance of a result: model set, checkpoint and its sha256, backend, device, versions."""
    device_name = "cpu"
    if loaded.device.type == "cuda":
        device_name = torch.cuda.get_device_name(loaded.device)
    return {
        "model_set": spec.model_set,
        "checkpoint": str(spec.checkpoint),
        "sha256": sha256_of(spec.checkpoint),
        "backend": loaded.backend,
        "device": loaded.device.type,
        "device_name": device_name,
        "dtype": dtype_name(loaded.dtype),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "threads": torch.get_num_threads(),
        "config": loaded.config.to_dict(),
    }


def check_length(loaded: LoadedModel, needed: int, keys: str) -> None:
    """A sequence longer than the model's rotary table is a config error, not a shape traceback."""
    limit = loaded.config.max_position_embeddings
    if needed > limit:
        raise MminferError(f"config keys {keys} ask for sequences of {needed} tokens but the model's "
                           f"max_position_embeddings is {limit} (config key 'model.max_position_embeddings').")


def set_threads(threads: int | None) -> None:
    if threads and threads > 0:
        torch.set_num_threads(threads)


def cache_job(spec: ModelSpec, tokenizer_dir, val_data, docs: int, prompt_tokens: int, new_tokens: int,
              same_out, count_out) -> tuple[dict, dict]:
    """Steps 1-2 -> same.json, count.json."""
    loaded = load(spec)
    tokenizer = load_tokenizer(tokenizer_dir)
    check_vocab_fits(tokenizer, loaded.config.vocab_size, spec.checkpoint, "pretrain", spec.model_set)
    prompt_ids = prompts.pretrain_prompt(tokenizer, val_data, docs, prompt_tokens)
    check_length(loaded, len(prompt_ids) + new_tokens, "cache.prompt_tokens + cache.new_tokens")
    log.info("prompt: %d tokens (bos + %d of the first %d documents)", len(prompt_ids), prompt_tokens, docs)
    same, count = greedy.compare_cache(loaded.model, prompt_ids, new_tokens, loaded.device)
    info = run_info(spec, loaded) | {"tokenizer": str(tokenizer_dir), "val_data": str(val_data),
                                     "docs": docs, "prompt_tokens": prompt_tokens}
    same["text"] = tokenizer.decode(same["ids"])
    same["run"] = info
    count["run"] = info
    log.info("same_ids=%s, max |logit difference| between the paths=%.3g", same["same_ids"], same["max_abs_logit_diff"])
    if same["first_difference"]:
        log.info("first differing step: %s", same["first_difference"])
    log.info("fed_with_cache=%d (formula %d), fed_without_cache=%d (formula %d)", count["fed_with_cache"],
             count["formula_with_cache"], count["fed_without_cache"], count["formula_without_cache"])
    write_json(same_out, same)
    write_json(count_out, count)
    return same, count


def time_job(spec: ModelSpec, tokenizer_dir, val_data, docs: int, prompt_tokens: int, new_tokens: int,
             warmup: int, runs: int, max_runs: int, out) -> dict:
    """Step 3 -> time.json (spec.threads: config key time.threads, else every core the rule gets)."""
    loaded = load(spec)
    tokenizer = load_tokenizer(tokenizer_dir)
    check_vocab_fits(tokenizer, loaded.config.vocab_size, spec.checkpoint, "pretrain", spec.model_set)
    prompt_ids = prompts.pretrain_prompt(tokenizer, val_data, docs, prompt_tokens)
    check_length(loaded, len(prompt_ids) + new_tokens, "cache.prompt_tokens + cache.new_tokens")
    result = timing.time_cache(loaded.model, prompt_ids, new_tokens, warmup, runs, max_runs, loaded.device)
    result["run"] = run_info(spec, loaded)
    log.info("with cache %.4f s (CV %.1f%%), without %.4f s (CV %.1f%%): medians of %d interleaved runs after %d "
             "warm-up, speedup %.2f at %d threads, load %s -> %s; verdict %s %s", result["with_cache_s"],
             100 * result["cv_with_cache"], result["without_cache_s"], 100 * result["cv_without_cache"],
             result["runs_done"], warmup, result["speedup"], result["threads"], result["load_before"],
             result["load_after"], result["verdict"], result["doubts"])
    write_json(out, result)
    return result


def kvbytes_job(spec: ModelSpec, tokens: int, seed: int, out) -> dict:
    """Step 4 -> kvbytes.json."""
    loaded = load(spec)
    check_length(loaded, tokens, "kvbytes.tokens")
    result = kvcache.measure_kv_bytes(loaded.model, loaded.config, tokens, seed, loaded.device)
    result["seed"] = seed
    result["run"] = run_info(spec, loaded)
    log.info("measured_bytes=%d formula_bytes=%d k_shape=%s", result["measured_bytes"], result["formula_bytes"],
             result["k_shape"])
    write_json(out, result)
    return result


def temp_job(spec: ModelSpec, tokenizer_dir, question: str, temperatures: list[float], samples: int,
             new_tokens: int, seed: int, out) -> dict:
    """Step 5 -> temp.json."""
    loaded = load(spec)
    tokenizer = load_tokenizer(tokenizer_dir)
    check_vocab_fits(tokenizer, loaded.config.vocab_size, spec.checkpoint, "sft", spec.model_set)
    prompt_ids = prompts.chat_prompt(tokenizer, question)
    result = sampling.temperature_experiment(loaded.model, tokenizer, prompt_ids, temperatures, samples,
                                             new_tokens, seed, loaded.device)
    info = run_info(spec, loaded) | {"question": question, "prompt_len": len(prompt_ids), "seed": seed}
    for key, summary in result.items():
        log.info("temperature %s: %d distinct of %d; most common (%d): %r", key, summary["distinct"],
                 summary["samples"], summary["answers"][0]["count"], summary["answers"][0]["answer"])
        summary["run"] = info  # inside each temperature: the top level holds temperatures only
    write_json(out, result)
    return result


def topp_job(spec: ModelSpec, tokenizer_dir, prefix: str, sharp_prefix: str, ps: list[float], out,
             detail_out) -> dict:
    """Step 6 -> topp.json (exactly the task's keys) and topp_detail.json (both positions, entropy,
    top tokens, the sorted distribution)."""
    loaded = load(spec)
    tokenizer = load_tokenizer(tokenizer_dir)
    check_vocab_fits(tokenizer, loaded.config.vocab_size, spec.checkpoint, "pretrain", spec.model_set)
    positions = {}
    for name, text in (("open", prefix), ("sharp", sharp_prefix)):
        logits = sampling.next_token_logits(loaded.model, prompts.prefix_prompt(tokenizer, text), loaded.device)
        positions[name] = sampling.position_detail(tokenizer, text, logits, ps)
        log.info("after [bos]%s: survivors %s, entropy %.2f bits", text, positions[name]["survivors"],
                 positions[name]["entropy_bits"])
    survivors = positions["open"]["survivors"]
    write_json(detail_out, {"ps": [float(p) for p in ps], "positions": positions, "run": run_info(spec, loaded)})
    write_json(out, survivors)
    return survivors


def model_spec_from(params: dict, checkpoint, threads: int | None = None) -> ModelSpec:
    """ModelSpec from a rule's ``params.model`` (see rules/common.smk), a checkpoint path and the
    rule's threads."""
    return ModelSpec(checkpoint=str(checkpoint), backend=params["backend"], minimind_src=params.get("minimind_src"),
                     device=params["device"], dtype=params["dtype"], overrides=dict(params.get("overrides") or {}),
                     model_set=params.get("model_set", "custom"), threads=threads)


def sweep_job(spec: ModelSpec, tokenizer_dir, val_data, docs: int, prompt_tokens: int, lengths: list[int],
              warmup: int, runs: int, out) -> dict:
    """Cost against generation length -> sweep.json (per-step times, every length, the cost fit)."""
    from mminfer.sweep import sweep

    loaded = load(spec)
    tokenizer = load_tokenizer(tokenizer_dir)
    check_vocab_fits(tokenizer, loaded.config.vocab_size, spec.checkpoint, "pretrain", spec.model_set)
    prompt_ids = prompts.pretrain_prompt(tokenizer, val_data, docs, prompt_tokens)
    check_length(loaded, len(prompt_ids) + max(lengths), "cache.prompt_tokens + max(sweep.lengths)")
    result = sweep(loaded.model, prompt_ids, lengths, warmup, runs, loaded.device,
                   loaded.config.max_position_embeddings)
    for point in result["points"]:
        log.info("N=%d: fed %d / %d, time %.4f / %.4f s, token ratio %.1f, time ratio %.2f", point["new_tokens"],
                 point["fed_with_cache"], point["fed_without_cache"], point["with_cache_s"],
                 point["without_cache_s"], point["token_ratio"], point["time_ratio"])
    fit = result["fit"]
    log.info("fit: fixed %.3g / %.3g s per step, %.3g s per token, %.3g s per attended pair; median relative "
             "residual %s; holds %s", fit["fixed_s_with_cache"], fit["fixed_s_without_cache"], fit["per_token_s"],
             fit["per_pair_s"], fit["median_relative_residual"], fit["holds"])
    result["run"] = run_info(spec, loaded)
    write_json(out, result)
    return result


def capacity_job(spec: ModelSpec, memory_gib: list[float], contexts: list, batch: int, batch_context: int,
                 out) -> dict:
    """KV bytes per token per dtype and the sequences that fit on a card -> capacity.json."""
    from mminfer.capacity import capacity

    loaded = load(spec)
    check_length(loaded, batch_context, "capacity.batch_context")
    result = capacity(loaded.model, loaded.config, loaded.device, memory_gib, contexts, batch, batch_context)
    log.info("bytes per token %s; batch check %s", {k: v["measured"] for k, v in result["bytes_per_token"].items()},
             result["batch_check"])
    result["run"] = run_info(spec, loaded)
    write_json(out, result)
    return result
