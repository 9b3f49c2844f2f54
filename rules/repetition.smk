# Beyond the task: what the repetition penalty changes and costs (repetition.json).


rule repetition:
    input:
        **reads("repetition"),
    output:
        measured("repetition", "생성 인자"),
    log:
        logfile("repetition.log"),
    benchmark:
        bench("repetition")
    conda:
        ENV
    threads: rule_threads("repetition")
    resources:
        **model_resources("repetition"),
    params:
        **named(
            sha256=contents("repetition"),
            temperature=config["repetition"]["temperature"],
            penalties=config["repetition"]["penalties"],
            question=config["temp"]["question"],
            samples=config["temp"]["samples"],
            new_tokens=config["temp"]["new_tokens"],
            seed=config["temp"]["seed"],
            chatml_fallback=config["temp"]["chatml_fallback"],
            docs=config["cache"]["docs"],
            prompt_tokens=config["cache"]["prompt_tokens"],
            greedy_new_tokens=config["cache"]["new_tokens"],
            warmup=config["time"]["warmup"],
            runs=config["time"]["runs"],
            max_runs=config["time"]["max_runs"],
            # time.threads: editing it reruns the rule
            threads=config["time"]["threads"],
            torch_threads=torch_threads,  # time.threads, else the job's threads
            model=model_params,
        ),
    script:
        "../scripts/repetition.py"
