"""## 고정 비용 줄이기: remedies.json's facts, glance row and sentences, and its join.

Each remedy's saving beside the part of anatomy.json's profile it removes.
"""

from __future__ import annotations

from dataclasses import fields

from mminfer.measures.anatomy.anatomy import Anatomy
from mminfer.measures.remedies import decide
from mminfer.measures.remedies.remedies import CONTROL, REMEDIES, Remedies
from mminfer.records import Glance
from mminfer.records.interval import Interval
from mminfer.records.sentences import Sentence, recomputed

# A remedy's cell under "한 단계 절약 (ms)": the saving where its rounds decide one, else what they
# say (its ratio stands in its own column)
SAVES_WORDS = {
    "above": "{{ r.saved_per_step_interval|ms_in }}",
    "below": "**더 느림**: 같은 때 돈 다른 일을 먼저 의심할 것",
    "same": "잡음 문턱(5 %) 안에서 같음",
    "undecided": "라운드로 가를 수 없음",
}


# A remedy's cell under "대조군 대비 절약 (ms)": its own saving, the control loop's not counted
OWN_WORDS = {
    "above": "{{ r.own_saved_per_step_interval|ms_in }}",
    "below": "**대조군보다 느림**",
    "same": "대조군과 잡음 문턱(5 %) 안에서 같음",
    "undecided": "라운드로 가를 수 없음",
}


# A saving's two sides in the table: against MiniMind's generate (``saves``), and against the
# control loop (``own_saves``): the runs it is decided from, the stored decision, the cell's words
SAVINGS = {
    "": (decide.saves_of, SAVES_WORDS),
    "_own": (decide.own_saves_of, OWN_WORDS),
}


def saving_sentence(name: str, suffix: str) -> Sentence:
    """remedies.<name><suffix>: the remedy's saving cell (SAVINGS), only what its rounds decide
    (the checker holds the one stored to it: decide.stored_decisions)."""
    saving, texts = SAVINGS[suffix]

    def holds(remedies: Remedies) -> str | None:
        remedy = remedies.remedies.get(name)
        return None if remedy is None else saving(remedy)

    prefix = "{% set r = remedies.remedies['" + name + "'] %}"
    words = {variant: prefix + text for variant, text in texts.items()}
    return Sentence(f"remedies.{name}{suffix}", holds=holds, words=words, check=recomputed)


def remedies_facts(remedies: Remedies) -> dict:
    """remedies.json's facts: the remedies that ran, those that did not, whether every run one
    gave MiniMind's ids."""
    ran = [r for r in remedies.remedies.values() if r.applies]
    return {field.name: getattr(remedies, field.name) for field in fields(remedies)} | {
        "ran": ran,
        "names": NAMES,
        # MiniMind's cached generate, one side shared by every remedy's rounds
        "minimind_interval": next(r.minimind_interval for r in ran if r.minimind_interval),
        "skipped": [r for r in remedies.remedies.values() if not r.applies],
        "all_same": all(r.same_ids for r in ran),
        # another process shared the cores while some remedy was timed (mminfer.records.machine)
        "busy": any(r.contention is not None and r.contention.busy for r in ran),
        "keep": remedies.logits_to_keep,
        "compile_cost": remedies.compile_cost,
        "steps": remedies.new_tokens,
        "device": remedies.run.device,
        "dtype": remedies.run.dtype,
    }


def remedies_glance(remedies: Remedies) -> Glance:
    """## 고정 비용 줄이기's row: "differ" (a remedy's ids part from MiniMind's), "saves" (some
    remedy's rounds decide a saving), "none" (none does); no verdict of its own."""
    if decide.differing(remedies):
        lesson = "differ"
    elif any(decide.saves_of(r) == "above" for r in remedies.remedies.values()):
        lesson = "saves"
    else:
        lesson = "none"
    return Glance(lesson=lesson, verdict=None, terms=("in_place_cache", "token_ratio"))


# Each remedy's name in the report (its table's first column, the lesson's remedy)
NAMES = {
    "loop": "자체 루프 (치료 없음, 대조군)",
    "in_place_cache": "제자리 캐시 (torch.cat 없음)",
    "gqa_without_repeat_kv": "repeat_kv 없는 GQA 어텐션",
    "all": "둘 다",
    "compile": "torch.compile (제자리 캐시 위)",
}
MOST = "{% set r = remedies.remedies[decide.remedies.most_saving(remedies)] %}"
NAME = "{{ " + repr(NAMES) + "[r.name] }}"  # a Jinja dict literal: the words see the records
ALONE_SENTENCES = (
    *(saving_sentence(name, "") for name in REMEDIES),
    *(saving_sentence(name, "_own") for name in REMEDIES if name != CONTROL),
    Sentence(
        "remedies.most",
        holds=decide.most,
        words={
            "saves": (
                MOST + "가장 많이 줄인 치료(" + NAME + ")는 같은 greedy id로 한 단계를"
                " {{ r.saved_per_step_interval|ms_in }} 줄여 {{ r.speedup_interval|x_in }}"
                " 빠르다."
            ),
            "none": "이 실행의 라운드로는 어느 치료도 시간을 줄였다고 가를 수 없다.",
        },
        check=recomputed,
    ),
    Sentence(
        "remedies.compile_cost",
        holds=decide.pays_back,
        words={
            "tokens": (
                "{% set c = remedies.compile_cost %}대신 컴파일은 첫 생성(한 번 잼)에"
                " {{ c.compile_interval|s_in }}를 더 써서, 토큰"
                " {{ c.break_even_interval|n_in }}개를 생성해야 본전이다."
            ),
            "unknown": (
                "{% set c = remedies.compile_cost %}컴파일은 첫 생성(한 번 잼)에"
                " {{ c.compile_interval|s_in }}를 더 썼고, 그 절약이 라운드로 가려지지 않아 몇"
                " 토큰에 본전인지는 말할 수 없다."
            ),
        },
        check=recomputed,
    ),
    Sentence(
        "remedies.differ",
        holds=decide.differs,
        words=(
            "**{{ remedies.remedies.values()|selectattr('same_ids', 'false')|map(attribute='name')"
            "|join(', ') }}의 greedy id가 MiniMind의 generate와 달랐다**: 이 치료의 시간은"
            " 비교하지 않는다(틀린 답을 빨리 내는 것은 치료가 아니다)."
        ),
        check=recomputed,
    ),
    Sentence(
        "remedies.keep",
        holds=decide.keep_of,
        words={
            "above": (
                "캐시 없는 경로에 `logits_to_keep=1`을 주면 생성이"
                " {{ remedies.logits_to_keep.speedup_interval|x_in }} 빨라졌다: 과제의 속도"
                " 향상에는 버려지는 lm_head 행의 낭비가 들어 있고, 그것을 빼면 속도 향상은"
                " {{ remedies.logits_to_keep.speedup_after|round(1) }}배다."
            ),
            "below": (
                "캐시 없는 경로에 `logits_to_keep=1`을 주자 오히려 느려졌다"
                "({{ remedies.logits_to_keep.speedup_interval|x_in }}): 같은 때 돈 다른 일을"
                " 먼저 의심할 것."
            ),
            "same": (
                "캐시 없는 경로에 `logits_to_keep=1`을 주어도 시간이 잡음 문턱(5 %) 안에서"
                " 같았다({{ remedies.logits_to_keep.speedup_interval|x_in }})."
            ),
            "undecided": (
                "캐시 없는 경로의 `logits_to_keep=1`이 시간을 줄이는지는 라운드로 가를 수 없다"
                "({{ remedies.logits_to_keep.speedup_interval|x_in }})."
            ),
        },
        check=recomputed,
    ),
)


# The profile's category (anatomy.json profile.with_cache.parts_s, mminfer.measures.anatomy's
# CATEGORIES) each remedy removes: the cache's torch.cat for the in-place cache, repeat_kv's copies
# for the grouped attention.
REMEDY_PARTS = {
    "in_place_cache": "kv_cat",
    "gqa_without_repeat_kv": "repeat_kv",
}


def profile_part_s(anatomy: Anatomy | None, remedy: str) -> float | None:
    """The cached path's profiled seconds of ``remedy``'s category in step 1's generation (the
    rounds' median); None where anatomy.json has no profile."""
    if anatomy is None or anatomy.profile is None or "with_cache" not in anatomy.profile:
        return None
    return anatomy.profile["with_cache"].parts_s.get(REMEDY_PARTS[remedy])


def beyond_parts(remedies: Remedies, anatomy: Anatomy | None) -> dict[str, bool]:
    """Each remedy that ran with MiniMind's ids and whose category the profile holds: whether its
    recorded saving's interval (per step, times the steps) lies wholly above the category's
    profiled time (True: the two disagree)."""
    found = {}
    for name in REMEDY_PARTS:
        remedy, part = remedies.remedies.get(name), profile_part_s(anatomy, name)
        if remedy is None or part is None or not (remedy.applies and remedy.same_ids):
            continue
        found[name] = remedy.saved_per_step_interval.low * remedies.new_tokens > part
    return found


def remedies_against_parts(remedies: Remedies, anatomy: Anatomy | None = None) -> str | None:
    """remedies.within_parts: "within" (every compared saving at most its category's time within
    the intervals), "beyond" (some saving wholly above it), None (nothing to compare)."""
    if anatomy is None or remedies.new_tokens != anatomy.new_tokens:
        return None
    found = beyond_parts(remedies, anatomy)
    return None if not found else ("beyond" if any(found.values()) else "within")


def floor_of(anatomy: Anatomy | None) -> Interval | None:
    """anatomy.json's floor per step (Anatomy.weights_floor); None without anatomy.json or its
    bandwidth probe at the cached working set, or where that probe's runs fall into two groups
    (nothing is concluded from an unreliable probe)."""
    probe = None if anatomy is None else anatomy.probes().get("bandwidth_with_cache")
    if probe is None or not probe.reliable:
        return None
    return anatomy.weights_floor()


def remedies_floor(remedies: Remedies, anatomy: Anatomy | None = None) -> str | None:
    """remedies.floor: the compiled step against anatomy.json's floor (above_floor), at the
    same N; None where either is missing."""
    if anatomy is None or remedies.new_tokens != anatomy.new_tokens:
        return None
    return decide.above_floor(remedies, floor_of(anatomy))


FLOOR = (
    "{% set floor = anatomy.weights_floor() %}{% set step = remedies.compiled_step() %}"
    "{% set ratio = remedies.compiled_over(floor) %}"
)
REMEDIES_SENTENCES = (
    Sentence(
        "remedies.within_parts",
        holds=remedies_against_parts,
        words={
            "within": (
                "치료마다 줄인 시간(생성 한 번)은 `## 한 단계 해부`의 프로파일이 그 부분(캐시의"
                " `torch.cat`, `repeat_kv`의 복사)에 잰 시간을 구간 안에서 넘지 않는다."
            ),
            "beyond": (
                "**치료가 줄인 시간이 프로파일이 그 부분(캐시의 `torch.cat`, `repeat_kv`의 복사)에"
                " 잰 시간보다 구간째 크다**: 프로파일러의 범주 나눔(그 부분을 덜 셌다)이나 치료의"
                " A B 시간(같은 때 돈 다른 일)을 의심할 것."
            ),
        },
        check=recomputed,
    ),
    Sentence(
        "remedies.floor",
        holds=remedies_floor,
        words={
            "above": (
                FLOOR + "컴파일된 한 단계({{ step|ms_in }})는 가중치를 한 번 읽는 바닥"
                "({{ floor|ms_in }})의 {{ ratio|x_in }}다."
            ),
            "below": (
                FLOOR + "**컴파일된 한 단계({{ step|ms_in }})가 가중치를 한 번 읽는 바닥"
                "({{ floor|ms_in }})보다 구간째 짧다**({{ ratio|x_in }}): 가중치를 읽는 것보다"
                " 빠를 수는 없으니, 대역폭 탐침이 가중치가 든 캐시 수준을 재지 못했을 수 있다."
            ),
            "undecided": (
                FLOOR + "컴파일된 한 단계({{ step|ms_in }})와 가중치를 읽는 바닥"
                "({{ floor|ms_in }})은 가려지지 않는다({{ ratio|x_in }})."
            ),
        },
        check=recomputed,
    ),
)

# The section's sentences (mminfer.records.sentences), collected by render.sentence_table.
SENTENCES = (*ALONE_SENTENCES, *REMEDIES_SENTENCES)
