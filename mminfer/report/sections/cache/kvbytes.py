"""## KV 캐시's bytes: kvbytes.json's facts and sentences, against the formula."""

from __future__ import annotations

from mminfer.measures.kvbytes.decide import bytes_against_formula
from mminfer.measures.kvbytes.kvbytes import KvBytes
from mminfer.records.sentences import Sentence


def kvbytes_facts(kvbytes: KvBytes) -> dict:
    return vars(kvbytes) | {
        "k_shape": tuple(kvbytes.k_shape),
        # how much larger the cache would be after repeat_kv
        "repeat": kvbytes.heads // kvbytes.kv_heads,
    }


# The section's sentences (mminfer.records.sentences): kvbytes.md.j2 asks say("kvbytes.bytes").
SENTENCES = (
    Sentence(
        "kvbytes.bytes",
        holds=bytes_against_formula,
        words={
            "equal": (
                "캐시의 실제 바이트는 공식과 정확히 같다: K는 `repeat_kv` 전에 저장되므로"
                " KV 헤드 {{ kvbytes.kv_heads }}개만큼이다."
            ),
            "differ": (
                "**캐시의 측정 바이트({{ kvbytes.measured_bytes|thousands }})가"
                " 공식({{ kvbytes.formula_bytes|thousands }})과 다르다.**"
            ),
        },
    ),
)
