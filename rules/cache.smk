# Steps 1-2: greedy generation with and without the KV cache, the tokens fed (same.json,
# count.json); and the task's script copied beside them.


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
