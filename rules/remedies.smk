# What removes the fixed cost per decode step: an own decode loop with each remedy, timed against
# MiniMind's cached generate at step 1's prompt and length.


rule remedies:
    input:
        **reads("remedies"),
    output:
        measured("remedies", "KV 캐시"),
    log:
        logfile("remedies.log"),
    benchmark:
        bench("remedies")
    conda:
        ENV
    threads: rule_threads("remedies")
    resources:
        **model_resources("remedies"),
    params:
        **named(
            sha256=contents("remedies"),
            docs=config["cache"]["docs"],
            prompt_tokens=config["cache"]["prompt_tokens"],
            new_tokens=config["cache"]["new_tokens"],
            compile=config["remedies"]["compile"],
            warmup=config["time"]["warmup"],
            runs=config["time"]["runs"],
            max_runs=config["time"]["max_runs"],
            # time.threads: editing it reruns the rule
            threads=config["time"]["threads"],
            torch_threads=torch_threads,  # time.threads, else the job's threads
            model=model_params,
        ),
    script:
        "../scripts/remedies.py"
