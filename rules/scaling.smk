# Beyond the task: cost against length, what fits on a card, and the plots.


rule sweep:
    input:
        pretrain=run_input("pretrain"),
        tokenizer=tokenizer_files,
        val_data=run_input("val_data"),
    output:
        report("{results}/sweep.json", caption="../report/sweep.rst", category="길이", subcategory="{results}"),
    params:
        docs=config["cache"]["docs"],
        prompt_tokens=config["cache"]["prompt_tokens"],
        lengths=config["sweep"]["lengths"],
        warmup=config["sweep"]["warmup"],
        runs=config["sweep"]["runs"],
        threads=config["time"]["threads"],  # the timing jobs' threads; null: the rule's threads
        model=model_params,
    threads: workflow.cores  # a timing job: nothing runs beside it
    resources:
        **MODEL_RESOURCES,
    conda:
        ENV
    log:
        logfile("sweep.log"),
    benchmark:
        bench("sweep")
    script:
        "../scripts/sweep.py"


rule capacity:
    input:
        pretrain=run_input("pretrain"),
    output:
        report("{results}/capacity.json", caption="../report/capacity.rst", category="카드", subcategory="{results}"),
    params:
        memory_gib=config["capacity"]["memory_gib"],
        contexts=config["capacity"]["contexts"],
        batch=config["capacity"]["batch"],
        batch_context=config["capacity"]["batch_context"],
        model=model_params,
    resources:
        **MODEL_RESOURCES,
    conda:
        ENV
    log:
        logfile("capacity.log"),
    benchmark:
        bench("capacity")
    script:
        "../scripts/capacity.py"


rule plot:
    input:
        lambda wildcards: PLOT_SOURCES[wildcards.plot].format(results=wildcards.results),
    output:
        report("{results}/{plot}.png", caption="../report/plot.rst", category="그림", subcategory="{results}"),
    wildcard_constraints:
        plot="|".join(PLOT_SOURCES),
    conda:
        ENV
    log:
        logfile("plot_{plot}.log"),
    benchmark:
        bench("plot_{plot}")
    script:
        "../scripts/plot.py"
