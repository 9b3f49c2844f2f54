# Step 5: what temperature changes (temp.json); beyond the task, the sampler is not the cache
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
        "../scripts/temp.py"
