# Fewer forward calls for the same tokens: prompt-lookup decoding against MiniMind's cached
# generate, at step 1's prompt and length and on the SFT model's chat prompt.


rule lookup:
    input:
        **reads("lookup"),
    output:
        measured("lookup", "KV 캐시"),
    log:
        logfile("lookup.log"),
    benchmark:
        bench("lookup")
    conda:
        ENV
    threads: rule_threads("lookup")
    resources:
        **model_resources("lookup"),
    params:
        **named(
            sha256=contents("lookup"),
            docs=config["cache"]["docs"],
            prompt_tokens=config["cache"]["prompt_tokens"],
            new_tokens=config["cache"]["new_tokens"],
            question=config["temp"]["question"],
            chatml_fallback=config["temp"]["chatml_fallback"],
            ngram=config["lookup"]["ngram"],
            guesses=config["lookup"]["guesses"],
            warmup=config["time"]["warmup"],
            runs=config["time"]["runs"],
            max_runs=config["time"]["max_runs"],
            # time.threads: editing it reruns the rule
            threads=config["time"]["threads"],
            torch_threads=torch_threads,  # time.threads, else the job's threads
            model=model_params,
        ),
    script:
        "../scripts/lookup.py"
