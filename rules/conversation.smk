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
    threads: workflow.cores  # all cores: nothing runs beside the timing
    resources:
        **model_resources("conversation"),
    params:
        sha256=contents("conversation"),
        conversation=config["conversation"],  # every key: records.conversation.ConversationSettings
        chatml_fallback=config["temp"]["chatml_fallback"],
        threads=config["time"]["threads"],  # torch's threads; null: the rule's threads
        model=model_params,
    script:
        "../scripts/conversation.py"
