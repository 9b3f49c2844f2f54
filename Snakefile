# mminfer: what the KV cache and sampling do in MiniMind's generate.
# The seven outputs of the task, in one results folder (config key `outdir`).


configfile: "config.yaml"


report: "report/workflow.rst"


include: "rules/common.smk"
include: "rules/demo.smk"
include: "rules/cache.smk"
include: "rules/kvbytes.smk"
include: "rules/sampling.smk"
include: "rules/scaling.smk"
include: "rules/anatomy.smk"
include: "rules/remedies.smk"
include: "rules/conversation.smk"
include: "rules/knobs.smk"
include: "rules/plots.smk"
include: "rules/report.smk"


rule all:
    default_target: True
    input:
        all_outputs(),
