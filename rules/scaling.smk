# Beyond the task: cost against length, what fits on a card, and what one machine serves.


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


rule serve:
    input:
        **reads("serve"),
    output:
        measured("serve", "서빙"),
    log:
        logfile("serve.log"),
    benchmark:
        bench("serve")
    conda:
        ENV
    threads: rule_threads("serve")
    resources:
        **model_resources("serve"),
    params:
        **named(
            sha256=contents("serve"),
            docs=config["cache"]["docs"],
            prompt_tokens=config["cache"]["prompt_tokens"],
            # every key of the section: mminfer.measures.serve.measure.ServeSettings
            serve=config["serve"],
            # time.threads: editing it reruns the rule
            threads=config["time"]["threads"],
            torch_threads=torch_threads,  # time.threads, else the job's threads
            model=model_params,
        ),
    script:
        "../scripts/serve.py"
