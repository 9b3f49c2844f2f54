# Step 7: report.md puts the task's numbers side by side, beyond.md every other measurement's,
# each its own rule and inputs; comparison.md puts the models side by side.


# report.md: the task's files and pictures only; it never waits for beyond.md's measurements.
rule report:
    input:
        **report_inputs("report"),
        cache_script=result(measurements.TASK_SCRIPT),
    output:
        report=shown("report.md", "report/report_md.rst", "보고서"),
    log:
        logfile("report.log"),
    benchmark:
        bench("report")
    conda:
        ENV
    script:
        "../scripts/report.py"


# beyond.md: every measurement's file (its sections set the task's figures beside their own).
rule beyond:
    input:
        **report_inputs("beyond"),
    output:
        report=shown("beyond.md", "report/beyond_md.rst", "보고서"),
    log:
        logfile("beyond.log"),
    benchmark:
        bench("beyond")
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
