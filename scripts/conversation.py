r"""A conversation's cache: every turn recomputed, or carried from the last -> conversation.json.

The SFT model answers config key conversation.questions in turn; also B users sharing a prompt
prefix, and generate's two cache pitfalls. Run by the workflow's `conversation` rule, or by hand:

    python scripts/conversation.py --sft /opt/mm/ref/sft.pth --tokenizer /opt/minimind/model \
        --out conversation.json
"""

from mminfer.conversation import ConversationSettings
from mminfer.jobs.conversation import conversation_job
from mminfer.loading import ModelSource, ModelSpec
from mminfer.script import SFT, TOKENIZER, cli, hand_model, job_log, tokenizer_folder

if "snakemake" in globals():
    with job_log(snakemake.log[0]):
        conversation_job(
            model=ModelSource(
                checkpoint=snakemake.input.sft,
                spec=ModelSpec(**snakemake.params.model),
                threads=snakemake.params.threads or snakemake.threads,  # time.threads, else all
                input_key="sft",
                lora=snakemake.input.sft_lora or None,  # none: an empty input
            ),
            tokenizer=tokenizer_folder(snakemake.input.tokenizer),
            settings=ConversationSettings(**snakemake.params.conversation),
            chatml_fallback=snakemake.params.chatml_fallback,
            out=snakemake.output[0],
        )
elif __name__ == "__main__":
    args = cli(
        __doc__,
        paths=[SFT, TOKENIZER, ("--out", "conversation.json to write")],
        keys=[
            "sft_lora",
            "conversation.questions",
            "conversation.new_tokens",
            "conversation.warmup",
            "conversation.runs",
            "conversation.max_runs",
            "conversation.users",
            "conversation.shared_tokens",
            "conversation.user_prompt_tokens",
            "conversation.user_new_tokens",
            "conversation.seed",
            "temp.chatml_fallback",
        ],
    )
    with job_log(args.log):
        conversation_job(
            model=hand_model(args, args.sft, input_key="sft", lora=args.sft_lora),
            tokenizer=args.tokenizer,
            settings=ConversationSettings(
                questions=args.questions,
                new_tokens=args.new_tokens,
                warmup=args.warmup,
                runs=args.runs,
                max_runs=args.max_runs,
                users=args.users,
                shared_tokens=args.shared_tokens,
                user_prompt_tokens=args.user_prompt_tokens,
                user_new_tokens=args.user_new_tokens,
                seed=args.seed,
            ),
            chatml_fallback=args.chatml_fallback,
            out=args.out,
        )
