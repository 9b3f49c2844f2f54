"""## 호출 수 줄이기: lookup.json's facts, glance row and sentences.

Prompt lookup cuts the forward calls, where the cache cut the tokens each call feeds: the lesson
is how many calls the same greedy ids took, whether the loop was faster than MiniMind's cached
generate in the same rounds (said only where the rounds decide it), and what a call of K + 1
tokens costs against a one-token step on this machine.
"""

from __future__ import annotations

from mminfer.measures.lookup import decide
from mminfer.measures.lookup.lookup import CASES, Lookup, mean_accepted
from mminfer.records import Glance
from mminfer.records.sentences import Sentence, recomputed

# Each case's name in the report: the first column of the tables
CASE_NAMES = {
    "validation": "검증 문서 (사전학습 모델)",
    "chat": "채팅 질문 (SFT 모델)",
}


def decided_ks(name: str, word: str) -> str:
    """The words naming the case's Ks whose rounds decided ``word`` (their speedups stand in the
    table)."""
    return (
        "{% set case = lookup.cases['" + name + "'] %}"
        "K = {{ case.by_guesses|selectattr('faster', 'equalto', '" + word + "')"
        "|map(attribute='guesses')|join(', ') }}"
    )


def case_sentence(name: str) -> Sentence:
    """lookup.<case>: the loop against the cached generate on that case, the Ks of the decision
    written named with their speedups; only what the rounds decide."""
    where = "검증 문서에서" if name == "validation" else "채팅 질문에서"
    words = {
        "above": where + " 룩업은 " + decided_ks(name, "above") + "에서 캐시 generate보다 빨랐다.",
        "below": where
        + " 룩업은 "
        + decided_ks(name, "below")
        + "에서 캐시 generate보다 **느렸다**.",
        "same": (
            where
            + " 룩업과 캐시 generate의 시간은 "
            + decided_ks(name, "same")
            + "에서 잡음 문턱(5 %) 안에서 같았다."
        ),
        "undecided": (
            where
            + " 룩업이 캐시 generate보다 빠른지는 "
            + decided_ks(name, "undecided")
            + "에서 라운드로 가를 수 없다."
        ),
    }
    return Sentence(
        f"lookup.{name}",
        holds=lambda lookup: decide.case_speed(lookup, name),
        words=words,
        check=recomputed,
    )


WIDEST = "{% set g = lookup.widest() %}"
SENTENCES = (
    Sentence(
        "lookup.ids",
        holds=decide.ids_found,
        words={
            "same": "모든 K에서 greedy id가 캐시 generate와 같았다.",
            "near_tie": (
                "갈라진 K가 있지만 모두 캐시 generate의 1, 2위 logit 차이가 반올림 허용치 안인"
                " 단계에서 갈라졌다: 검증 호출은 같은 위치를 다른 묶음으로 계산하므로 동점에 가까운"
                " 곳은 다르게 반올림될 수 있다."
            ),
            "differ": (
                "**어떤 K의 greedy id가 캐시 generate와 뚜렷한 1위에서 갈라졌다**: 룩업 루프의"
                " 버그다. 그 K의 시간은 재지 않았다."
            ),
        },
        check=recomputed,
    ),
    Sentence(
        "lookup.calls",
        holds=decide.calls_found,
        words={
            "fewer": (
                "{% set case = lookup.cases['validation'] %}{% set g = case.fewest_calls() %}"
                "검증 문서에서 K = {{ g.guesses }}의 룩업은 캐시 generate의 forward 호출"
                " {{ case.calls_cached }}번 대신 {{ g.calls }}번으로"
                " {{ '같은 토큰을' if g.same_ids else '(id가 갈라진 채로) 토큰을' }} 냈다"
                "(추측 {{ g.accepted }}개 채택)."
            ),
            "none": (
                "검증 문서에서도 어느 K도 forward 호출 수를 줄이지 못했다: 앞 글에서 이어질"
                " 토큰을 찾지 못했다."
            ),
        },
    ),
    Sentence(
        "lookup.counts",
        holds=decide.counts,
        words=(
            "호출 수, 넣은 토큰, 롤백 뒤 캐시 바이트는 모든 K에서 공식(N − 채택,"
            " P + 호출 − 1 + 제안, 위치 P + N − 1의 바이트)과 같다."
        ),
    ),
    Sentence(
        "lookup.counts_differ",
        holds=decide.counts_differ,
        words="**호출 수, 넣은 토큰 또는 롤백 뒤 캐시 바이트가 공식과 다른 K가 있다.**",
    ),
    *(case_sentence(name) for name in CASES),
    Sentence(
        "lookup.wide",
        holds=decide.wide_found,
        words={
            "above": (
                WIDEST + "이 기계에서 {{ g.guesses + 1 }}토큰 검증 호출 한 번은 한 토큰 단계의"
                " {{ g.wide.ratio_interval|x_in }}가 든다."
            ),
            "same": (
                WIDEST + "이 기계에서 {{ g.guesses + 1 }}토큰 검증 호출은 한 토큰 단계와 잡음"
                " 문턱(5 %) 안에서 같은 시간이 든다({{ g.wide.ratio_interval|x_in }})."
            ),
            "below": (
                WIDEST + "{{ g.guesses + 1 }}토큰 검증 호출이 한 토큰 단계보다 **빨랐다**"
                "({{ g.wide.ratio_interval|x_in }}): 같은 때 돈 다른 일을 먼저 의심할 것."
            ),
            "undecided": (
                WIDEST + "{{ g.guesses + 1 }}토큰 검증 호출이 한 토큰 단계보다 더 드는지는"
                " 라운드로 가를 수 없다({{ g.wide.ratio_interval|x_in }})."
            ),
        },
        check=recomputed,
    ),
)


def lookup_facts(lookup: Lookup) -> dict:
    """lookup.json's facts: the cases in order, each K's mean kept per call, the functions the
    sentences' words call."""
    first = next(iter(lookup.cases.values()))
    return vars(lookup) | {
        "case_names": CASE_NAMES,
        "means": {
            name: {g.guesses: mean_accepted(g) for g in case.by_guesses}
            for name, case in lookup.cases.items()
        },
        "new_tokens": first.new_tokens,
        "device": first.run.device,
        "dtype": first.run.dtype,
        "busy": lookup.contention is not None and lookup.contention.busy,
    }


def lookup_glance(lookup: Lookup) -> Glance:
    """## 호출 수 줄이기's row: "differ" (ids part on a clear winner), "faster" (fewer calls on the
    validation prompt and some K decided faster there), "fewer" (fewer calls, no K decided
    faster), "none" (no fewer calls)."""
    lesson = decide.glance(lookup)
    return Glance(lesson=lesson, verdict=None, terms=("prompt_lookup",))
