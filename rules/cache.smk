# Steps 1-3: greedy generation with and without the KV cache, the tokens fed, the time.


rule cache:
    input:
        pretrain=run_input("pretrain"),
        tokenizer=tokenizer_files,
        val_data=run_input("val_data"),
    output:
        same=report("{results}/same.json", caption="../report/same.rst", category="KV 캐시", subcategory="{results}"),
        counts=report("{results}/count.json", caption="../report/count.rst", category="KV 캐시", subcategory="{results}"),
    params:
        docs=config["cache"]["docs"],
        prompt_tokens=config["cache"]["prompt_tokens"],
        new_tokens=config["cache"]["new_tokens"],
        model=model_params,
    resources:
        **MODEL_RESOURCES,
    conda:
        ENV
    log:
        logfile("cache.log"),
    benchmark:
        bench("cache")
    script:
        "../scripts/cache.py"


rule cache_script:
    input:
        str(Path(workflow.basedir) / "scripts" / "cache.py"),
    output:
        "{results}/cache.py",
    conda:
        ENV
    log:
        logfile("cache_script.log"),
    shell:
        "cp {input:q} {output:q} 2> {log:q}"


rule time:
    input:
        pretrain=run_input("pretrain"),
        tokenizer=tokenizer_files,
        val_data=run_input("val_data"),
    output:
        report("{results}/time.json", caption="../report/time.rst", category="KV 캐시", subcategory="{results}"),
    params:
        docs=config["cache"]["docs"],
        prompt_tokens=config["cache"]["prompt_tokens"],
        new_tokens=config["cache"]["new_tokens"],
        warmup=config["time"]["warmup"],
        runs=config["time"]["runs"],
        max_runs=config["time"]["max_runs"],
        threads=config["time"]["threads"],  # torch's threads; null: the rule's threads
        model=model_params,
    threads: workflow.cores  # all cores: nothing runs beside the timing
    resources:
        **MODEL_RESOURCES,
    conda:
        ENV
    log:
        logfile("time.log"),
    benchmark:
        bench("time")
    script:
        "../scripts/time_generation.py"
