# Beyond the task: generate's other knobs. The trap of its default top_k (topk.json), the
# repetition penalty (repetition.json), a left-padded batch with its attention_mask (batch.json).


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


rule batch:
    input:
        **reads("batch"),
    output:
        measured("batch", "생성 인자"),
    log:
        logfile("batch.log"),
    benchmark:
        bench("batch")
    conda:
        ENV
    threads: rule_threads("batch")
    resources:
        **model_resources("batch"),
    params:
        **named(
            sha256=contents("batch"),
            prompts=config["batch"]["prompts"],
            shortest=config["batch"]["shortest"],
            new_tokens=config["batch"]["new_tokens"],
            docs=config["cache"]["docs"],
            prompt_tokens=config["cache"]["prompt_tokens"],
            warmup=config["time"]["warmup"],
            runs=config["time"]["runs"],
            max_runs=config["time"]["max_runs"],
            # time.threads: editing it reruns the rule
            threads=config["time"]["threads"],
            torch_threads=torch_threads,  # time.threads, else the job's threads
            model=model_params,
        ),
    script:
        "../scripts/batch.py"
