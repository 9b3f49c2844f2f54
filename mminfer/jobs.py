"""One function per measurement rule: load, call the function that computes the rule's numbers, write
the JSON atomically (a failed job leaves no output). Keyword arguments are named like the rule's
inputs, ``params:`` and outputs, so a script passes them straight through."""

from __future__ import annotations

import logging
import platform

import torch

from mminfer import capacity as capacity_module
from mminfer import greedy, kvcache, prompts, sampling, timing
from mminfer import sweep as sweep_module
from mminfer.errors import MminferError
from mminfer.io import sha256_of, write_json
from mminfer.loading import LoadedModel, ModelSpec, dtype_name, load_model
from mminfer.tokenizer import Tokenizer, check_vocab_fits, load_tokenizer

log = logging.getLogger("mminfer")


def open_model(checkpoint, model: ModelSpec, threads: int | None) -> LoadedModel:
    """Set torch's threads first (two 1-thread jobs must not each take every core), then load."""
    if threads:
        torch.set_num_threads(threads)
    loaded = load_model(checkpoint, model)
    config = loaded.config
    log.info(
        "loaded %s with backend %s on %s (%s), %d threads: %d layers, hidden %d, heads %d, kv heads %d, "
        "head_dim %d, vocab %d",
        checkpoint,
        loaded.backend,
        loaded.device,
        dtype_name(loaded.dtype),
        torch.get_num_threads(),
        config.num_hidden_layers,
        config.hidden_size,
        config.num_attention_heads,
        config.num_key_value_heads,
        config.head_dim,
        config.vocab_size,
    )
    return loaded


def open_with_tokenizer(
    checkpoint, tokenizer, model: ModelSpec, threads, key: str
) -> tuple[LoadedModel, Tokenizer]:
    """The model and its tokenizer, checked to fit each other (``key``: the checkpoint's config key)."""
    loaded = open_model(checkpoint, model, threads)
    loaded_tokenizer = load_tokenizer(tokenizer)
    check_vocab_fits(loaded_tokenizer, loaded.config.vocab_size, checkpoint, key, model.model_set)
    return loaded, loaded_tokenizer


def task_prompt(
    loaded: LoadedModel,
    tokenizer: Tokenizer,
    val_data,
    docs: int,
    prompt_tokens: int,
    new_tokens: int,
    keys: str,
) -> list[int]:
    """The task's greedy prompt, checked to leave room for ``new_tokens`` in the model's positions."""
    prompt_ids = prompts.pretrain_prompt(tokenizer, val_data, docs, prompt_tokens)
    check_length(loaded, len(prompt_ids) + new_tokens, keys)
    return prompt_ids


def check_length(loaded: LoadedModel, needed: int, keys: str) -> None:
    """A sequence past the model's rotary table is a config error, not a shape traceback."""
    limit = loaded.config.max_position_embeddings
    if needed > limit:
        raise MminferError(
            f"config keys {keys} ask for sequences of {needed} tokens but the model's "
            f"max_position_embeddings is {limit} (config key 'model.max_position_embeddings')."
        )


def run_info(loaded: LoadedModel, **extra) -> dict:
    """Provenance of a result: model set, checkpoint and its sha256, backend, device, versions, threads."""
    device_name = (
        torch.cuda.get_device_name(loaded.device) if loaded.device.type == "cuda" else "cpu"
    )
    return {
        "model_set": loaded.spec.model_set,
        "checkpoint": str(loaded.path),
        "sha256": sha256_of(loaded.path),
        "backend": loaded.backend,
        "device": loaded.device.type,
        "device_name": device_name,
        "dtype": dtype_name(loaded.dtype),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "threads": torch.get_num_threads(),
        "config": loaded.config.to_dict(),
    } | extra


def cache_job(
    pretrain,
    tokenizer,
    val_data,
    docs: int,
    prompt_tokens: int,
    new_tokens: int,
    model: ModelSpec,
    threads: int | None,
    same_out,
    count_out,
) -> tuple[dict, dict]:
    """Steps 1-2 -> same.json, count.json."""
    loaded, loaded_tokenizer = open_with_tokenizer(pretrain, tokenizer, model, threads, "pretrain")
    prompt_ids = task_prompt(
        loaded,
        loaded_tokenizer,
        val_data,
        docs,
        prompt_tokens,
        new_tokens,
        "cache.prompt_tokens + cache.new_tokens",
    )
    same, count = greedy.compare_cache(loaded.model, prompt_ids, new_tokens, loaded.device)
    same["text"] = loaded_tokenizer.decode(same["ids"])
    same["run"] = count["run"] = run_info(
        loaded,
        tokenizer=str(tokenizer),
        val_data=str(val_data),
        docs=docs,
        prompt_tokens=prompt_tokens,
    )
    log.info(
        "same_ids=%s (max |logit difference| %.3g, first difference %s); %s",
        same["same_ids"],
        same["max_abs_logit_diff"],
        same["first_difference"],
        {k: v for k, v in count.items() if k != "run"},
    )
    write_json(same_out, same)
    write_json(count_out, count)
    return same, count


def time_job(
    pretrain,
    tokenizer,
    val_data,
    docs: int,
    prompt_tokens: int,
    new_tokens: int,
    warmup: int,
    runs: int,
    max_runs: int,
    model: ModelSpec,
    threads: int | None,
    out,
) -> dict:
    """Step 3 -> time.json (threads: config key time.threads, else every core the rule gets)."""
    loaded, loaded_tokenizer = open_with_tokenizer(pretrain, tokenizer, model, threads, "pretrain")
    prompt_ids = task_prompt(
        loaded,
        loaded_tokenizer,
        val_data,
        docs,
        prompt_tokens,
        new_tokens,
        "cache.prompt_tokens + cache.new_tokens",
    )
    result = timing.time_cache(
        loaded.model, prompt_ids, new_tokens, warmup, runs, max_runs, loaded.device
    )
    result["run"] = run_info(loaded)
    log.info(
        "%s",
        {
            key: result[key]
            for key in (
                "with_cache_s",
                "without_cache_s",
                "speedup",
                "cv_with_cache",
                "cv_without_cache",
                "runs_done",
                "verdict",
                "threads",
                "load_after",
            )
        },
    )
    write_json(out, result)
    return result


def kvbytes_job(
    pretrain, tokens: int, seed: int, model: ModelSpec, threads: int | None, out
) -> dict:
    """Step 4 -> kvbytes.json."""
    loaded = open_model(pretrain, model, threads)
    check_length(loaded, tokens, "kvbytes.tokens")
    result = kvcache.measure_kv_bytes(loaded.model, loaded.config, tokens, seed, loaded.device)
    result["seed"] = seed
    result["run"] = run_info(loaded)
    log.info(
        "measured_bytes=%d formula_bytes=%d k_shape=%s",
        result["measured_bytes"],
        result["formula_bytes"],
        result["k_shape"],
    )
    write_json(out, result)
    return result


def temp_job(
    sft,
    tokenizer,
    question: str,
    temperatures: list[float],
    samples: int,
    new_tokens: int,
    seed: int,
    model: ModelSpec,
    threads: int | None,
    out,
) -> dict:
    """Step 5 -> temp.json."""
    loaded, loaded_tokenizer = open_with_tokenizer(sft, tokenizer, model, threads, "sft")
    prompt_ids = prompts.chat_prompt(loaded_tokenizer, question)
    result = sampling.temperature_experiment(
        loaded.model,
        loaded_tokenizer,
        prompt_ids,
        temperatures,
        samples,
        new_tokens,
        seed,
        loaded.device,
    )
    info = run_info(loaded, question=question, prompt_len=len(prompt_ids), seed=seed)
    for key, summary in result.items():
        log.info(
            "temperature %s: %d distinct of %d; most common (%d): %r",
            key,
            summary["distinct"],
            summary["samples"],
            summary["answers"][0]["count"],
            summary["answers"][0]["answer"],
        )
        summary["run"] = info  # inside each temperature: the top level holds temperatures only
    write_json(out, result)
    return result


def topp_job(
    pretrain,
    tokenizer,
    prefix: str,
    sharp_prefix: str,
    ps: list[float],
    model: ModelSpec,
    threads: int | None,
    topp_out,
    detail_out,
) -> dict:
    """Step 6 -> topp.json (exactly the task's keys: the survivors after [bos] + prefix) and
    topp_detail.json (both positions, entropy, top tokens, the sorted distribution)."""
    loaded, loaded_tokenizer = open_with_tokenizer(pretrain, tokenizer, model, threads, "pretrain")
    positions = {}
    for name, text in (("open", prefix), ("sharp", sharp_prefix)):
        logits = sampling.next_token_logits(
            loaded.model, prompts.prefix_prompt(loaded_tokenizer, text), loaded.device
        )
        survivors = sampling.survivors_by_p(logits, ps)
        positions[name] = sampling.position_detail(loaded_tokenizer, text, logits, survivors)
        log.info(
            "after [bos]%s: survivors %s, entropy %.2f bits",
            text,
            positions[name]["survivors"],
            positions[name]["entropy_bits"],
        )
    write_json(
        detail_out, {"ps": [float(p) for p in ps], "positions": positions, "run": run_info(loaded)}
    )
    write_json(topp_out, positions["open"]["survivors"])
    return positions["open"]["survivors"]


def sweep_job(
    pretrain,
    tokenizer,
    val_data,
    docs: int,
    prompt_tokens: int,
    lengths: list[int],
    warmup: int,
    runs: int,
    model: ModelSpec,
    threads: int | None,
    out,
) -> dict:
    """Cost against generation length -> sweep.json (per-step times, every length, the cost fit)."""
    loaded, loaded_tokenizer = open_with_tokenizer(pretrain, tokenizer, model, threads, "pretrain")
    prompt_ids = task_prompt(
        loaded,
        loaded_tokenizer,
        val_data,
        docs,
        prompt_tokens,
        max(lengths),
        "cache.prompt_tokens + max(sweep.lengths)",
    )
    result = sweep_module.sweep(
        loaded.model,
        prompt_ids,
        lengths,
        warmup,
        runs,
        loaded.device,
        loaded.config.max_position_embeddings,
    )
    log.info(
        "time ratio %s at N = %s; fit %s",
        [round(p["time_ratio"], 2) for p in result["points"]],
        result["lengths"],
        {k: v for k, v in result["fit"].items() if k not in ("model", "method")},
    )
    result["run"] = run_info(loaded)
    write_json(out, result)
    return result


def capacity_job(
    pretrain,
    memory_gib: list[float],
    contexts: list,
    batch: int,
    batch_context: int,
    model: ModelSpec,
    threads: int | None,
    out,
) -> dict:
    """KV bytes per token per dtype and the sequences that fit on a card -> capacity.json."""
    loaded = open_model(pretrain, model, threads)
    check_length(loaded, batch_context, "capacity.batch_context")
    result = capacity_module.capacity(
        loaded.model, loaded.config, loaded.device, memory_gib, contexts, batch, batch_context
    )
    log.info("bytes per token %s; batch check %s", result["bytes_per_token"], result["batch_check"])
    result["run"] = run_info(loaded)
    write_json(out, result)
    return result
