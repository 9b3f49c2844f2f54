# The embedded demo model: a tiny MiniMind trained here from a synthetic Korean corpus, for machines
# without the course files. Built only when the resolved inputs are the demo's (config key `demo`).


rule demo_corpus:
    output:
        train=demo("corpus/pretrain_train.jsonl"),
        val=demo("corpus/pretrain_val.jsonl"),
        sft=demo("corpus/sft.jsonl"),
        facts=demo("corpus/facts.json"),
    params:
        corpus=config["demo_model"]["corpus"],
    conda:
        ENV
    log:
        demo("logs/corpus.log"),
    script:
        "../scripts/demo_corpus.py"


rule demo_tokenizer:
    input:
        train=demo("corpus/pretrain_train.jsonl"),
        sft=demo("corpus/sft.jsonl"),
    output:
        demo("tokenizer/tokenizer.json"),
        demo("tokenizer/tokenizer_config.json"),
    params:
        vocab_size=config["demo_model"]["vocab_size"],
    conda:
        ENV
    log:
        demo("logs/tokenizer.log"),
    script:
        "../scripts/demo_tokenizer.py"


rule demo_pretrain:
    input:
        train=demo("corpus/pretrain_train.jsonl"),
        tokenizer=[demo("tokenizer/tokenizer.json"), demo("tokenizer/tokenizer_config.json")],
    output:
        demo("pretrain.pth"),
    params:
        train=config["demo_model"]["pretrain"],
        max_positions=config["demo_model"]["max_position_embeddings"],
    threads: workflow.cores
    resources:
        **TRAIN_RESOURCES,
    conda:
        ENV
    log:
        demo("logs/pretrain.log"),
    script:
        "../scripts/demo_train.py"


rule demo_sft:
    input:
        pretrain=demo("pretrain.pth"),
        sft=demo("corpus/sft.jsonl"),
        tokenizer=[demo("tokenizer/tokenizer.json"), demo("tokenizer/tokenizer_config.json")],
    output:
        demo("sft.pth"),
    params:
        train=config["demo_model"]["sft"],
        max_positions=config["demo_model"]["max_position_embeddings"],
    threads: workflow.cores
    resources:
        **TRAIN_RESOURCES,
    conda:
        ENV
    log:
        demo("logs/sft.log"),
    script:
        "../scripts/demo_train.py"
