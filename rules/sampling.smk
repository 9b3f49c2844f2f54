# Steps 5-6: what temperature and top-p change.


rule temp:
    input:
        sft=run_input("sft"),
        tokenizer=tokenizer_files,
    output:
        report("{results}/temp.json", caption="../report/temp.rst", category="온도", subcategory="{results}"),
    params:
        question=config["temp"]["question"],
        temperatures=config["temp"]["temperatures"],
        samples=config["temp"]["samples"],
        new_tokens=config["temp"]["new_tokens"],
        seed=config["temp"]["seed"],
        model=model_params,
    resources:
        **MODEL_RESOURCES,
    conda:
        ENV
    log:
        logfile("temp.log"),
    benchmark:
        bench("temp")
    script:
        "../scripts/temperature.py"


rule topp:
    input:
        pretrain=run_input("pretrain"),
        tokenizer=tokenizer_files,
    output:
        topp=report("{results}/topp.json", caption="../report/topp.rst", category="top-p", subcategory="{results}"),
        detail=report("{results}/topp_detail.json", caption="../report/topp_detail.rst", category="top-p", subcategory="{results}"),
    params:
        prefix=config["topp"]["prefix"],
        sharp_prefix=config["topp"]["sharp_prefix"],
        ps=config["topp"]["ps"],
        model=model_params,
    resources:
        **MODEL_RESOURCES,
    conda:
        ENV
    log:
        logfile("topp.log"),
    benchmark:
        bench("topp")
    script:
        "../scripts/topp.py"
