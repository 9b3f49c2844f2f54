# Pictures of the results, each drawn from the JSON file beside it (mminfer.outputs.PLOTS).


rule plot:
    input:
        source=lambda wildcards: out(outputs.PLOTS[wildcards.plot], wildcards.results),
    output:
        shown("{plot}.png", "plot", "그림"),
    log:
        logfile("plot_{plot}.log"),
    benchmark:
        bench("plot_{plot}")
    wildcard_constraints:
        plot="|".join(outputs.PLOTS),
    conda:
        ENV
    script:
        "../scripts/plot.py"
