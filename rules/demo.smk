# The embedded demo model: a tiny MiniMind trained here from a synthetic Korean corpus, for machines
# without the course files. Built only when the resolved inputs are the demo's (config key `demo`).


rule demo_corpus:
    output:
        train=demo("corpus/pretrain_train.jsonl"),
        val=demo("corpus/pretrain_val.jsonl"),
        sft=demo("corpus/sft.jsonl"),
        facts=demo("corpus/facts.json"),
    log:
        demo("logs/corpus.log"),
    conda:
        ENV
    params:
        **named(
            corpus=config["demo_model"]["corpus"],
        ),
    script:
        "../scripts/demo_corpus.py"


rule demo_tokenizer:
    input:
        train=demo("corpus/pretrain_train.jsonl"),
        sft=demo("corpus/sft.jsonl"),
    output:
        demo("tokenizer/tokenizer.json"),
        demo("tokenizer/tokenizer_config.json"),
    log:
        demo("logs/tokenizer.log"),
    conda:
        ENV
    params:
        **named(
            vocab_size=config["demo_model"]["vocab_size"],
        ),
    script:
        "../scripts/demo_tokenizer.py"


rule demo_pretrain:
    input:
        corpus=demo("corpus/pretrain_train.jsonl"),
        tokenizer=[
            demo("tokenizer/tokenizer.json"),
            demo("tokenizer/tokenizer_config.json"),
        ],
    output:
        demo("pretrain.pth"),
    log:
        demo("logs/pretrain.log"),
    conda:
        ENV
    threads: workflow.cores
    resources:
        **TRAIN_RESOURCES,
    params:
        **named(
            train=config["demo_model"]["pretrain"],
            max_positions=config["demo_model"]["max_position_embeddings"],
        ),
    script:
        "../scripts/demo_pretrain.py"


rule demo_sft:
    input:
        pretrain=demo("pretrain.pth"),
        sft=demo("corpus/sft.jsonl"),
        tokenizer=[
            demo("tokenizer/tokenizer.json"),
            demo("tokenizer/tokenizer_config.json"),
        ],
    output:
        demo("sft.pth"),
    log:
        demo("logs/sft.log"),
    conda:
        ENV
    threads: workflow.cores
    resources:
        **TRAIN_RESOURCES,
    params:
        **named(
            train=config["demo_model"]["sft"],
            max_positions=config["demo_model"]["max_position_embeddings"],
        ),
    script:
        "../scripts/demo_sft.py"
