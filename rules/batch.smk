# Beyond the task: a left-padded batch with its attention_mask against each prompt alone
# (batch.json).


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
