# Beyond the task: what one machine serves, decode steps per batch size (serve.json).


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
