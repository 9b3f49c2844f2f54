# mminfer: what the KV cache and sampling do in MiniMind's generate.
# The seven outputs of the task, in one results folder (config key `outdir`).


configfile: "config.yaml"


report: "report/workflow.rst"


include: "rules/common.smk"
include: "rules/demo.smk"
# One file per measuring rule, named after it, in report order (mminfer.measurements.rules()).
include: "rules/cache.smk"
include: "rules/time.smk"
include: "rules/kvbytes.smk"
include: "rules/temp.smk"
include: "rules/topp.smk"
include: "rules/sweep.smk"
include: "rules/anatomy.smk"
include: "rules/remedies.smk"
include: "rules/lookup.smk"
include: "rules/capacity.smk"
include: "rules/serve.smk"
include: "rules/conversation.smk"
include: "rules/topk.smk"
include: "rules/repetition.smk"
include: "rules/batch.smk"
include: "rules/plots.smk"
include: "rules/report.smk"


rule all:
    default_target: True
    input:
        all_outputs(),
