# Beyond the task: a conversation's cache, carried from turn to turn or recomputed every turn.


rule conversation:
    input:
        **reads("conversation"),
    output:
        measured("conversation", "대화"),
    log:
        logfile("conversation.log"),
    benchmark:
        bench("conversation")
    conda:
        ENV
    threads: rule_threads("conversation")
    resources:
        **model_resources("conversation"),
    params:
        **named(
            sha256=contents("conversation"),
            # every key: mminfer.measures.conversation.conversation.ConversationSettings
            conversation=config["conversation"],
            chatml_fallback=config["temp"]["chatml_fallback"],
            # time.threads: editing it reruns the rule
            threads=config["time"]["threads"],
            torch_threads=torch_threads,  # time.threads, else the job's threads
            model=model_params,
        ),
    script:
        "../scripts/conversation.py"
