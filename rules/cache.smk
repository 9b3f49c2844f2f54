# Steps 1-3: greedy generation with and without the KV cache, the tokens fed, the time.


rule cache:
    input:
        **reads("cache"),
    output:
        same=measured("same", "KV 캐시"),
        # not count=: Snakemake reserves a list method's name (measurements.key)
        count_json=measured("count", "KV 캐시"),
    log:
        logfile("cache.log"),
    benchmark:
        bench("cache")
    # first among the jobs ready: step 1's greedy answer checks that the tokenizer is the model's
    # (tokenizer.check_greedy_answer_fits) before any job decodes an answer with it
    priority: 1
    conda:
        ENV
    threads: rule_threads("cache")
    resources:
        **model_resources("cache"),
    params:
        **named(
            sha256=contents("cache"),
            docs=config["cache"]["docs"],
            prompt_tokens=config["cache"]["prompt_tokens"],
            new_tokens=config["cache"]["new_tokens"],
            model=model_params,
        ),
    script:
        "../scripts/cache.py"


# The task's script beside its results (report.md names it as the writer of same/count.json).
rule cache_script:
    input:
        str(Path(REPO) / "scripts" / measurements.TASK_SCRIPT),
    output:
        result(measurements.TASK_SCRIPT),
    log:
        logfile("cache_script.log"),
    conda:
        ENV
    shell:
        "cp {input:q} {output:q} 2> {log:q}"


rule time:
    input:
        **reads("time"),
    output:
        time=measured("time", "KV 캐시"),
        latency=measured("latency", "지연"),  # the same runs' stamps
    log:
        logfile("time.log"),
    benchmark:
        bench("time")
    conda:
        ENV
    threads: rule_threads("time")
    resources:
        **model_resources("time"),
    params:
        **named(
            sha256=contents("time"),
            docs=config["cache"]["docs"],
            prompt_tokens=config["cache"]["prompt_tokens"],
            new_tokens=config["cache"]["new_tokens"],
            warmup=config["time"]["warmup"],
            runs=config["time"]["runs"],
            max_runs=config["time"]["max_runs"],
            # time.threads: editing it reruns the rule
            threads=config["time"]["threads"],
            torch_threads=torch_threads,  # time.threads, else the job's threads
            speed_tokens=config["latency"]["speed_tokens"],
            cost_rounds=config["latency"]["cost_rounds"],
            model=model_params,
        ),
    script:
        "../scripts/time_generation.py"
