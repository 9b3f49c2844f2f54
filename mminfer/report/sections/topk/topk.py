"""## top-k 함정: topk.json's facts, glance row and sentences, beside temp.json and topp.json."""

from __future__ import annotations

from mminfer.measures.temp.temp import Temperatures
from mminfer.measures.topk import decide
from mminfer.measures.topk.topk import TopK
from mminfer.measures.topp.topp import TopP
from mminfer.records import Glance
from mminfer.records.sentences import Sentence


def topk_facts(topk: TopK) -> dict:
    """topk.json's own figures: top-k on, each temperature's answers and each p's survivors.

    Beside temp.json and topp.json (the same experiments with top-k off: which way top-k moved
    the counts) is this module's join.
    """
    return {
        "ids_past_tokenizer": sum(s.ids_past_tokenizer for s in topk.temp.values()),
        "with_counts": [summary.distinct for summary in topk.temp.values()],
        "top_k": topk.top_k,
        "prefix": topk.prefix,
        "samples": topk.samples,
        "seed": topk.seed,
        "top_k_survivors": topk.top_k_survivors,
        "record_mass": topk.top_k_mass,
        "lora": topk.run.lora is not None,
    }


# The section's sentences (mminfer.records.sentences): topk.md.j2 asks say("topk.cap") after the
# survivors' table; those beside temp.json and topp.json are this module's joins.
ALONE_SENTENCES = (
    Sentence(
        "topk.cap",
        holds=decide.cap_reached,
        words=(
            "p = {% for p, n in topk.topp.items() if n == topk.top_k_survivors %}{{ p }}"
            '{{ ", " if not loop.last }}{% endfor %}에서는 top-k가 남긴'
            " {{ topk.top_k_survivors }}개가 모두 남았다: 거기서는 k가 상한이다."
        ),
    ),
)


def topk_temp_topp_facts(
    topk: TopK, temp: Temperatures | None = None, topp: TopP | None = None
) -> dict:
    """topk.json (mminfer.measures.topk.topk.topk_facts) beside temp.json and topp.json (the
    same experiments with top-k off).

    Per temperature: the distinct answers both ways, which way top-k moved them, the probability
    it cut; per p: the survivors both ways; whether top-k changed any count at all.
    """
    temperatures = []
    for key, summary in topk.temp.items():
        without = temp[key].distinct if temp is not None and key in temp else None
        temperatures.append(
            {
                "temperature": key,
                "with_top_k": summary,
                "without_top_k": without,
                "moved": None if without is None else direction(summary.distinct, without),
            }
        )
    ps = []
    for key, survivors in topk.topp.items():
        without = topp.get(key) if topp is not None else None
        ps.append({"p": key, "with_top_k": survivors, "without_top_k": without})
    moved = [row["moved"] for row in temperatures if row["moved"] is not None]
    return topk_facts(topk) | {
        "without_counts": [row["without_top_k"] for row in temperatures],
        "temperatures": temperatures,
        "ps": ps,
        "compared_with_temp": bool(moved),
        "counts_moved": any(way != "same" for way in moved),
        "compared_with_topp": compared_with_topp(topk, topp),
    }


def topk_temp_glance(topk: TopK, temp: Temperatures | None = None) -> Glance:
    """## top-k's row: its lesson the sentence topk.lesson's variant."""
    return Glance(
        lesson=counts_against_temp(topk, temp), terms=("top_k", "distinct", "survivor", "seed")
    )


def direction(after: int, before: int) -> str:
    """ "fewer", "same" or "more": how a count moved from ``before`` to ``after``."""
    if after < before:
        return "fewer"
    if after > before:
        return "more"
    return "same"


def counts_against_temp(topk: TopK, temp: Temperatures | None) -> str:
    """The distinct answers, top-k on against temp.json's (top-k off), each temperature one draw
    of the same seed's samples: "moved" (they differ at two temperatures or more), "moved_once"
    (at one: one sample, too little to say top_k changes the count), "same" (every temperature of
    topk.json has temp.json's row, with the same count), "alone" (no temp.json, or not every
    temperature in it)."""
    compared = [
        (summary.distinct, temp[key].distinct)
        for key, summary in topk.temp.items()
        if temp is not None and key in temp
    ]
    differ = sum(on != off for on, off in compared)
    if differ > 1:
        return "moved"
    if differ == 1:
        return "moved_once"
    if compared and len(compared) == len(topk.temp):
        return "same"
    return "alone"


def survivors_against_topp(topk: TopK, topp: TopP | None) -> str | None:
    """The survivors, top-k then top-p against top-p alone (topp.json), per p: "fewer" (at every
    p), "some" (fewer at some p, the same at the others), "same" (at every p); None where more
    survive at some p, or topp.json lacks a p."""
    if topp is None or not topk.topp or any(topp.get(key) is None for key in topk.topp):
        return None
    pairs = [(survivors, topp[key]) for key, survivors in topk.topp.items()]
    if all(on < off for on, off in pairs):
        return "fewer"
    if any(on > off for on, off in pairs):
        return None
    if any(on < off for on, off in pairs):
        return "some"
    return "same"


def compared_with_topp(topk: TopK, topp: TopP | None) -> bool:
    """topp.json has a p of topk.json's with survivors to compare."""
    return topp is not None and any(topp.get(key) for key in topk.topp)


def mass_against_topp(topk: TopK, topp: TopP | None) -> str | None:
    """Beside topp.json: "renormalised" (the top k hold less than all the probability,
    top_k_mass < 1, so top-p after top-k counts within a renormalised mass and reaches p sooner),
    "whole" (they hold it all); None without topp.json to compare with."""
    if not compared_with_topp(topk, topp):
        return None
    if topk.top_k_mass < 1.0:
        return "renormalised"
    if topk.top_k_mass >= 1.0:
        return "whole"
    return None


# a temperature's count of distinct answers in temp.json (top-k off), "—" where it has none
WITHOUT_TOP_K = '(temp[key].distinct if key in temp else none)|default("—", true)'


TOPK_SENTENCES = (
    Sentence(
        "topk.counts",
        holds=counts_against_temp,
        words={
            "moved": (
                'generate의 기본값 top_k={{ topk.top_k|particle("을/를") }} 켜 두자 온도 실험의'
                " 서로 다른 답(distinct)이 {% for key in topk.temp %}{{ "
                + WITHOUT_TOP_K
                + ' }}{{ " → " if not loop.last }}{% endfor %}에서'
                ' {{ topk.temp.values()|map(attribute="distinct")|join(" → ")'
                '|particle("으로/로") }} 바뀌었다: 온도마다 같은 시드로 샘플 {{ topk.samples }}개를'
                " 한 번씩 뽑은 결과다. 두 온도 이상에서 달라, 과제가 top_k=0을 요구하는 까닭이다."
            ),
            "moved_once": (
                'generate의 기본값 top_k={{ topk.top_k|particle("을/를") }} 켜 두자 온도'
                " {% for key, s in topk.temp.items() if key in temp and s.distinct !="
                " temp[key].distinct %}{{ key }}에서만 서로 다른 답(distinct)이"
                " {{ temp[key].distinct }}개에서 {{ s.distinct }}개로 달랐다{% endfor %}: 같은"
                " 시드로 샘플 {{ topk.samples }}개를 한 번 뽑은 한 표본이라, top_k가 답 수를"
                " 바꾼다고 말할 수는 없다."
            ),
            "same": (
                'generate의 기본값 top_k={{ topk.top_k|particle("을/를") }} 켜 두어도 이'
                " 모델에서는 온도마다 서로 다른 답(distinct)의 수가 temp.json과 같았다. 잘린 확률은"
                " 표에 있다."
            ),
            "alone": (
                'generate의 기본값 top_k={{ topk.top_k|particle("을/를") }} 켜 둔 채 온도'
                " 실험과 top-p를 다시 쟀다."
            ),
        },
    ),
    Sentence(
        "topk.lesson",
        holds=counts_against_temp,
        words={
            "moved": "기본 top_k를 켜자 두 온도 이상에서 답 수가 달랐다(온도마다 한 표본)",
            "moved_once": "한 온도의 한 표본에서만 답 수가 달랐다: top_k의 효과라 말할 수 없다",
            "same": "이 모델에서는 기본 top_k가 답 수를 바꾸지 않았다",
            "alone": "기본 top_k를 켠 온도 실험과 top-p",
        },
    ),
    Sentence(
        "topk.survivors",
        holds=survivors_against_topp,
        words={
            "fewer": (
                "[bos]{{ topk.prefix }} 뒤에서는 top-k를 먼저 적용하자 모든 p에서 top-p만 쓸"
                ' 때보다 적게 남았다({{ topk.topp.values()|join("/") }} 대'
                ' {% for p in topk.topp %}{{ topp[p] }}{{ "/" if not loop.last }}{% endfor %}).'
            ),
            "some": (
                "[bos]{{ topk.prefix }} 뒤에서는 top-k를 먼저 적용하자 p = "
                "{% for p, n in topk.topp.items() if n < topp[p] %}{{ p }}"
                '{{ ", " if not loop.last }}{% endfor %}에서 top-p만 쓸 때보다 적게 남았고, p = '
                "{% for p, n in topk.topp.items() if n == topp[p] %}{{ p }}"
                '{{ ", " if not loop.last }}{% endfor %}에서는 같았다.'
            ),
            "same": (
                "[bos]{{ topk.prefix }} 뒤에서는 top-k를 먼저 적용해도 어느 p에서나 생존 후보 수가"
                " 같았다."
            ),
        },
    ),
    Sentence(
        "topk.mass",
        holds=mass_against_topp,
        words={
            "renormalised": (
                "그 자리에서 상위 {{ topk.top_k }}개가 가진 확률은"
                " {{ topk.top_k_mass|percent }}이고, top-k 뒤의 top-p는 그 안에서 다시 1로 맞춘"
                " 확률을 센다: top-p만 쓸 때의 p ×"
                " {{ topk.top_k_mass|percent }}에서 자르는 셈이라 누적 확률이 p에 더 일찍 닿는다."
            ),
            "whole": (
                "그 자리에서는 상위 {{ topk.top_k }}개가 확률을 모두 가져(top_k_mass"
                " {{ topk.top_k_mass|percent }}) top-k가 top-p의 셈을 다시 맞추지 않는다."
            ),
        },
    ),
)

# The section's sentences (mminfer.records.sentences), collected by render.sentence_table.
SENTENCES = (*ALONE_SENTENCES, *TOPK_SENTENCES)
