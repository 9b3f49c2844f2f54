# Beyond the task: what fits on a card, KV bytes per token per dtype (capacity.json).


rule capacity:
    input:
        **reads("capacity"),
    output:
        measured("capacity", "카드"),
    log:
        logfile("capacity.log"),
    benchmark:
        bench("capacity")
    conda:
        ENV
    threads: rule_threads("capacity")
    resources:
        **model_resources("capacity"),
    params:
        **named(
            sha256=contents("capacity"),
            memory_gib=config["capacity"]["memory_gib"],
            contexts=config["capacity"]["contexts"],
            batch=config["capacity"]["batch"],
            batch_context=config["capacity"]["batch_context"],
            model=model_params,
        ),
    script:
        "../scripts/capacity.py"
