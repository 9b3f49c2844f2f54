# Where a step's time goes: step 1's generation taken apart, and the machine beside it. The time
# split joins anatomy.json with time.json in the report, so time.json is not an input here.


rule anatomy:
    input:
        **reads("anatomy"),
    output:
        measured("anatomy", "KV 캐시"),
    log:
        logfile("anatomy.log"),
    benchmark:
        bench("anatomy")
    conda:
        ENV
    threads: rule_threads("anatomy")
    resources:
        **model_resources("anatomy"),
    params:
        **named(
            sha256=contents("anatomy"),
            docs=config["cache"]["docs"],
            prompt_tokens=config["cache"]["prompt_tokens"],
            new_tokens=config["cache"]["new_tokens"],
            probe_runs=config["anatomy"]["probe_runs"],
            split_tolerance=config["anatomy"]["split_tolerance"],
            # time.threads: editing it reruns the rule
            threads=config["time"]["threads"],
            torch_threads=torch_threads,  # time.threads, else the job's threads
            model=model_params,
        ),
    script:
        "../scripts/anatomy.py"
