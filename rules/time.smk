# Step 3: the time of greedy generation with and without the KV cache (time.json), and what a
# user waits for in those same runs (latency.json). The rule keeps the task's name, `time`
# (`snakemake -R time`); its script is scripts/time_generation.py, not to shadow Python's `time`.


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
