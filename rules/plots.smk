# Pictures of the results, each drawn from the JSON file beside it (mminfer.measurements.pictures).


rule plot:
    input:
        source=lambda wildcards: out(
            measurements.pictures()[wildcards.plot], wildcards.results
        ),
    output:
        shown("{plot}.png", "report/plot.rst", "그림"),
    log:
        logfile("plot_{plot}.log"),
    benchmark:
        bench("plot_{plot}")
    wildcard_constraints:
        plot="|".join(measurements.pictures()),
    conda:
        ENV
    params:
        **named(
            caption=lambda wildcards: measurements.picture(
                wildcards.plot
            ).caption,  # plot.rst
        ),
    script:
        "../scripts/plot.py"
