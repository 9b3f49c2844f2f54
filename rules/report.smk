# Step 7: report.md puts the numbers side by side.


rule report:
    input:
        same="{results}/same.json",
        counts="{results}/count.json",
        time="{results}/time.json",
        kvbytes="{results}/kvbytes.json",
        temp="{results}/temp.json",
        topp="{results}/topp.json",
        topp_detail="{results}/topp_detail.json",
        sweep="{results}/sweep.json",
        capacity="{results}/capacity.json",
        sweep_png="{results}/sweep.png",
        temp_png="{results}/temp.png",
        topp_png="{results}/topp.png",
        cache_script="{results}/cache.py",  # the task's script: the report names it, the one command leaves it
        template=str(Path(workflow.basedir) / "report" / "report.md.j2"),  # an edited sentence reruns the report
    output:
        report("{results}/report.md", caption="../report/report_md.rst", category="보고서", subcategory="{results}"),
    conda:
        ENV
    log:
        logfile("report.log"),
    benchmark:
        bench("report")
    script:
        "../scripts/report.py"


rule compare:
    input:
        **{name: [out(f"{name}.json", results) for results in RUNS] for name in PER_MODEL_FILES},
    output:
        out("comparison.md"),
    params:
        names=[RUNS[results]["model_set"] for results in RUNS],
    conda:
        ENV
    log:
        out("logs/compare.log"),
    script:
        "../scripts/compare.py"
