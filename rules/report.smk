# Step 7: report.md puts the task's numbers side by side, beyond.md every other measurement's;
# comparison.md puts the models side by side.


rule report:
    input:
        # every measurement's file, by its key (mminfer.measurements.key), and every picture
        **{
            measurements.key(name): result(file)
            for name, file in measurements.files().items()
        },
        **{
            f"{name}_png": result(measurements.picture_file(name))
            for name in measurements.pictures()
        },
        cache_script=result(measurements.TASK_SCRIPT),
        # the Korean sentences: editing one reruns the report (the reports' templates in report/)
        template=str(Path(REPO) / "report" / "report.md.j2"),
        sections=sorted(
            str(path)
            for folder in ("report", "mminfer/measures")
            for path in (Path(REPO) / folder).glob("**/*.md.j2")
        ),
    output:
        report=shown("report.md", "report/report_md.rst", "보고서"),
        beyond=shown("beyond.md", "report/beyond_md.rst", "보고서"),
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
            name: [
                out(measurements.measurement(name).filename, folder) for folder in RUNS
            ]
            for name in measurements.compared()
        },
    output:
        out(measurements.COMPARISON),
    log:
        out("logs/compare.log"),
    conda:
        ENV
    params:
        **named(
            names=[RUNS[folder]["model_set"] for folder in RUNS],
        ),
    script:
        "../scripts/compare.py"
