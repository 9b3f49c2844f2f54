# Step 4: the KV cache's real bytes against the formula.


rule kvbytes:
    input:
        **reads("kvbytes"),
    output:
        measured("kvbytes", "KV 캐시"),
    log:
        logfile("kvbytes.log"),
    benchmark:
        bench("kvbytes")
    conda:
        ENV
    threads: rule_threads("kvbytes")
    resources:
        **model_resources("kvbytes"),
    params:
        **named(
            sha256=contents("kvbytes"),
            tokens=config["kvbytes"]["tokens"],
            seed=config["kvbytes"]["seed"],
            model=model_params,
        ),
    script:
        "../scripts/kvbytes.py"
