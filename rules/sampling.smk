# Steps 5-6: what temperature and top-p change; beyond the task, the sampler is not the cache
# (sampler.json, from temp's own draws and model load).


rule temp:
    input:
        **reads("temp"),
    output:
        temp=measured("temp", "온도"),
        sampler=measured("sampler", "온도"),
    log:
        logfile("temp.log"),
    benchmark:
        bench("temp")
    conda:
        ENV
    threads: rule_threads("temp")
    resources:
        **model_resources("temp"),
    params:
        **named(
            sha256=contents("temp"),
            question=config["temp"]["question"],
            temperatures=config["temp"]["temperatures"],
            samples=config["temp"]["samples"],
            new_tokens=config["temp"]["new_tokens"],
            seed=config["temp"]["seed"],
            chatml_fallback=config["temp"]["chatml_fallback"],
            sampler_temperature=config["sampler"]["temperature"],
            second_seed=config["sampler"]["second_seed"],
            model=model_params,
        ),
    script:
        "../scripts/temperature.py"


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
