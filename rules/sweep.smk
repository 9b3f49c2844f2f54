# Beyond the task: cost against generation length (sweep.json).


rule sweep:
    input:
        **reads("sweep"),
    output:
        measured("sweep", "길이"),
    log:
        logfile("sweep.log"),
    benchmark:
        bench("sweep")
    conda:
        ENV
    threads: rule_threads("sweep")
    resources:
        **model_resources("sweep"),
    params:
        **named(
            sha256=contents("sweep"),
            docs=config["cache"]["docs"],
            prompt_tokens=config["cache"]["prompt_tokens"],
            # every key of the section: mminfer.measures.sweep.measure.SweepSettings
            sweep=config["sweep"],
            # time.threads: editing it reruns the rule
            threads=config["time"]["threads"],
            torch_threads=torch_threads,  # time.threads, else the job's threads
            model=model_params,
        ),
    script:
        "../scripts/sweep.py"
