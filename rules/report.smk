# Step 7: report.md puts the numbers side by side.


rule report:
    input:
        same=out("same.json"),
        counts=out("count.json"),
        time=out("time.json"),
        kvbytes=out("kvbytes.json"),
        temp=out("temp.json"),
        topp=out("topp.json"),
        topp_detail=out("topp_detail.json"),
    output:
        out("report.md"),
    conda:
        ENV
    log:
        logfile("report.log"),
    script:
        "../scripts/report.py"
