# Beyond the task: the trap of generate's default top_k, steps 5 and 6 with it on (topk.json).


rule topk:
    input:
        **reads("topk"),
    output:
        measured("topk", "생성 인자"),
    log:
        logfile("topk.log"),
    benchmark:
        bench("topk")
    conda:
        ENV
    threads: rule_threads("topk")
    resources:
        **model_resources("topk"),
    params:
        **named(
            sha256=contents("topk"),
            top_k=config["topk"]["top_k"],
            question=config["temp"]["question"],
            temperatures=config["temp"]["temperatures"],
            samples=config["temp"]["samples"],
            new_tokens=config["temp"]["new_tokens"],
            seed=config["temp"]["seed"],
            chatml_fallback=config["temp"]["chatml_fallback"],
            prefix=config["topp"]["prefix"],
            ps=config["topp"]["ps"],
            model=model_params,
        ),
    script:
        "../scripts/topk.py"
