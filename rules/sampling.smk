# Steps 5-6: what temperature and top-p change; beyond the task, the sampler is not the cache
# (sampler.json, from temp's own draws and model load).


rule temp:
    input:
        sft=run_input("sft"),
        sft_lora=lora_input,
        tokenizer=tokenizer_files,
    output:
        temp=measured("temp", "온도"),
        sampler=measured("sampler", "온도"),
    log:
        logfile("temp.log"),
    benchmark:
        bench("temp")
    conda:
        ENV
    resources:
        **MODEL_RESOURCES,
    params:
        question=config["temp"]["question"],
        temperatures=config["temp"]["temperatures"],
        samples=config["temp"]["samples"],
        new_tokens=config["temp"]["new_tokens"],
        seed=config["temp"]["seed"],
        chatml_fallback=config["temp"]["chatml_fallback"],
        sampler_temperature=config["sampler"]["temperature"],
        second_seed=config["sampler"]["second_seed"],
        model=model_params,
    script:
        "../scripts/temperature.py"


rule topp:
    input:
        pretrain=run_input("pretrain"),
        tokenizer=tokenizer_files,
    output:
        topp=measured("topp", "top-p"),
        topp_detail=measured("topp_detail", "top-p"),
    log:
        logfile("topp.log"),
    benchmark:
        bench("topp")
    conda:
        ENV
    resources:
        **MODEL_RESOURCES,
    params:
        prefix=config["topp"]["prefix"],
        sharp_prefix=config["topp"]["sharp_prefix"],
        ps=config["topp"]["ps"],
        model=model_params,
    script:
        "../scripts/topp.py"
