"""What one machine serves: decode steps per batch size, the users by speed and by memory.

Opens the model on the task's prompt and measures with mminfer.serve.serve; writes serve.json.
"""

import logging

from mminfer import serve
from mminfer.loading import ModelSource, ModelSpec, open_for_task_prompt, run_info
from mminfer.records import PretrainPrompt, write_record
from mminfer.script import job_log, rule_only, tokenizer_folder
from mminfer.serve import ServeSettings

log = logging.getLogger("mminfer")

if "snakemake" in globals():
    with job_log(snakemake.log[0]):
        settings = ServeSettings(**snakemake.params.serve)
        loaded, _, prompt_ids = open_for_task_prompt(
            ModelSource(
                checkpoint=snakemake.input.pretrain,
                spec=ModelSpec(**snakemake.params.model),
                threads=snakemake.params.threads or snakemake.threads,  # time.threads, else all
            ),
            PretrainPrompt(
                tokenizer=tokenizer_folder(snakemake.input.tokenizer),
                val_data=snakemake.input.val_data,
                docs=snakemake.params.docs,
                prompt_tokens=snakemake.params.prompt_tokens,
            ),
            settings.decode_steps + 1,
            "cache.prompt_tokens + serve.decode_steps + 1",
        )
        served = serve.serve(
            loaded.model, loaded.config, prompt_ids, settings, loaded.device, run_info(loaded)
        )
        for row in served.batches:
            log.info(
                "batch %d: prefill %s s, decode step %.4f s, %.1f tokens/s (%.1f per user), "
                "KV %d B (formula %d), experts touched %s",
                row.batch,
                row.prefill_s,
                row.decode_step_s,
                row.tokens_per_second,
                row.per_user_tokens_per_second,
                row.kv_bytes,
                row.formula_kv_bytes,
                row.experts_touched,
            )
        users = served.users
        log.info(
            "users at %s tokens/s and %d tokens of context: %d by speed (%s), %s by memory; "
            "%s binds",
            users.tokens_per_second,
            users.context,
            users.users_by_speed,
            users.speed_how,
            users.users_by_memory,
            users.binding,
        )
        write_record(snakemake.output[0], served)
elif __name__ == "__main__":
    rule_only("serve", "serve.json")
