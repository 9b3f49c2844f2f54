r"""Step 6: top-p survivors after [bos] + prefix -> topp.json (and topp_detail.json).

topp.json holds exactly the task's keys: the survivors after [bos] + prefix; topp_detail.json both
positions (the open prefix and a sharp one), their entropy, top tokens and sorted distribution
(mminfer.measures.topp.measure.topp_detail). Run by the workflow's `topp` rule, or by hand:

    python scripts/topp.py --pretrain /opt/mm/ref/pretrain.pth --tokenizer /opt/minimind/model \
        --out topp.json --detail topp_detail.json
"""

import logging

from mminfer.measures.topp import measure
from mminfer.model.loading import ModelSource, open_with_tokenizer, run_info
from mminfer.records import write_record
from mminfer.workflow.script import (
    PRETRAIN,
    TOKENIZER,
    cli,
    hand_model,
    job_log,
    rule_model,
    section_keys,
    tokenizer_folder,
)


def topp(
    model: ModelSource, tokenizer, prefix: str, sharp_prefix: str, ps, topp_out, topp_detail_out
):
    """Open the model, read both positions' next-token distributions, write both files."""
    loaded, loaded_tokenizer = open_with_tokenizer(model, tokenizer)
    detail = measure.topp_detail(
        model=loaded.model,
        tokenizer=loaded_tokenizer,
        prefixes={"open": prefix, "sharp": sharp_prefix},
        ps=ps,
        device=loaded.device,
        run=run_info(loaded),
    )
    for position in detail.positions.values():
        logging.getLogger("mminfer").info(
            "after [bos]%s: survivors %s, entropy %.2f bits",
            position.prefix,
            position.survivors,
            position.entropy_bits,
        )
    write_record(topp_detail_out, detail)
    write_record(topp_out, detail.positions["open"].survivors)


if "snakemake" in globals():
    with job_log(snakemake.log[0]):
        topp(
            model=rule_model(snakemake),
            tokenizer=tokenizer_folder(snakemake.input.tokenizer),
            prefix=snakemake.params.prefix,
            sharp_prefix=snakemake.params.sharp_prefix,
            ps=snakemake.params.ps,
            topp_out=snakemake.output.topp,
            topp_detail_out=snakemake.output.topp_detail,
        )
elif __name__ == "__main__":
    args = cli(
        __doc__,
        paths=[
            PRETRAIN,
            TOKENIZER,
            ("--out", "topp.json to write"),
            ("--detail", "topp_detail.json to write"),
        ],
        keys=section_keys("topp"),
    )
    with job_log(args.log):
        topp(
            model=hand_model(args, args.pretrain),
            tokenizer=args.tokenizer,
            prefix=args.prefix,
            sharp_prefix=args.sharp_prefix,
            ps=args.ps,
            topp_out=args.out,
            topp_detail_out=args.detail,
        )
