# Step 7: report.md puts the numbers side by side; comparison.md puts the models side by side.


rule report:
    input:
        # every result file the template reads, by name (mminfer.outputs.report_inputs)
        **{name: result(file) for name, file in outputs.report_inputs().items()},
        # the Korean sentences: editing one reruns the report
        template=str(Path(REPO) / "report" / "report.md.j2"),
    output:
        shown("report.md", "report_md", "보고서"),
    log:
        logfile("report.log"),
    benchmark:
        bench("report")
    conda:
        ENV
    script:
        "../scripts/report.py"


rule compare:
    input:
        **{
            name: [out(file, folder) for folder in RUNS]
            for name, file in outputs.COMPARED_JSON.items()
        },
    output:
        out(outputs.COMPARISON),
    log:
        out("logs/compare.log"),
    conda:
        ENV
    params:
        names=[RUNS[folder]["model_set"] for folder in RUNS],
    script:
        "../scripts/compare.py"
