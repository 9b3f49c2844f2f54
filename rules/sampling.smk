# Steps 5-6: what temperature and top-p change.


rule temp:
    input:
        sft=run_input("sft"),
        tokenizer=tokenizer_files,
    output:
        "{results}/temp.json",
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
    script:
        "../scripts/temperature.py"


rule topp:
    input:
        pretrain=run_input("pretrain"),
        tokenizer=tokenizer_files,
    output:
        topp="{results}/topp.json",
        detail="{results}/topp_detail.json",
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
    script:
        "../scripts/topp.py"
