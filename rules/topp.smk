# Step 6: which tokens top-p keeps after [bos] + prefix (topp.json, topp_detail.json).


rule topp:
    input:
        **reads("topp"),
    output:
        topp=measured("topp", "top-p"),
        topp_detail=measured("topp_detail", "top-p"),
    log:
        logfile("topp.log"),
    benchmark:
        bench("topp")
    conda:
        ENV
    threads: rule_threads("topp")
    resources:
        **model_resources("topp"),
    params:
        **named(
            sha256=contents("topp"),
            prefix=config["topp"]["prefix"],
            sharp_prefix=config["topp"]["sharp_prefix"],
            ps=config["topp"]["ps"],
            model=model_params,
        ),
    script:
        "../scripts/topp.py"
