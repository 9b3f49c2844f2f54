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
    output:
        report("{results}/report.md", caption="../report/report_md.rst", category="보고서", subcategory="{results}"),
    conda:
        ENV
    log:
        logfile("report.log"),
    script:
        "../scripts/report.py"


rule compare:
    input:
        time=[out("time.json", results) for results in RUNS],
        kvbytes=[out("kvbytes.json", results) for results in RUNS],
        temp=[out("temp.json", results) for results in RUNS],
        topp=[out("topp.json", results) for results in RUNS],
        capacity=[out("capacity.json", results) for results in RUNS],
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
