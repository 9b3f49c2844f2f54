# Step 4: the KV cache's real bytes against the formula.


rule kvbytes:
    input:
        pretrain=run_input("pretrain"),
    output:
        report("{results}/kvbytes.json", caption="../report/kvbytes.rst", category="KV 캐시", subcategory="{results}"),
    params:
        tokens=config["kvbytes"]["tokens"],
        seed=config["kvbytes"]["seed"],
        model=model_params,
    resources:
        **MODEL_RESOURCES,
    conda:
        ENV
    log:
        logfile("kvbytes.log"),
    benchmark:
        bench("kvbytes")
    script:
        "../scripts/kvbytes.py"
