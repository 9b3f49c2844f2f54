"""## 반복 페널티: repetition.json's facts, glance row and sentences, beside temp.json."""

from __future__ import annotations

from mminfer.measures.repetition import decide
from mminfer.measures.repetition.repetition import Repetition
from mminfer.measures.temp.temp import Temperatures
from mminfer.records import Glance
from mminfer.records.sentences import Sentence, recomputed


def repetition_facts(repetition: Repetition) -> dict:
    """repetition.json's facts: each penalty's answers and greedy, how the distinct answers move
    as the penalty grows (penalties in ascending order), the cost. Whether 1.0 drew temp.json's
    counts at that temperature is this module's join: ``matches_temp`` and
    ``temp_distinct`` None here.
    """
    key = repr(float(repetition.temperature))
    off = repetition.penalties.get("1.0")
    ascending = sorted(repetition.penalties, key=float)
    counts = [repetition.penalties[name].distinct for name in ascending]
    greedy_left = [
        name
        for name, penalty in repetition.penalties.items()
        if penalty.greedy_first_divergence is not None
    ]
    timing = repetition.timing
    return {
        "ids_past_tokenizer": sum(p.ids_past_tokenizer for p in repetition.penalties.values()),
        "ascending": ascending,
        "counts": counts,
        "temperature": key,
        "samples": repetition.samples,
        "new_tokens": repetition.new_tokens,
        "seed": repetition.seed,
        "loop_ngram": repetition.loop_ngram,
        "greedy_new_tokens": repetition.greedy_new_tokens,
        "greedy_prompt_len": repetition.greedy_prompt.prompt_tokens + 1,
        "penalties": repetition.penalties,
        "off": off,
        "matches_temp": None,
        "temp_distinct": None,
        "greedy_left": greedy_left,
        "timing": timing,
        "lora": repetition.run.lora is not None,
        "dtype": repetition.run.dtype,
        "device": repetition.run.device,
    }


def repetition_glance(repetition: Repetition) -> Glance:
    """## 반복 페널티's row: how the distinct answers move as the penalty grows ("more", "fewer",
    "same", "mixed"; "alone" for one penalty), the cost's verdict."""
    moved = decide.distinct_trend(repetition)
    verdict = None if repetition.timing is None else repetition.timing.verdict
    return Glance(
        lesson=moved or "alone",
        verdict=verdict,
        terms=("repetition_penalty", "looping", "seed", "cv"),
    )


MOVED = {"more": "늘었다", "fewer": "줄었다", "same": "그대로였다", "mixed": "오르내렸다"}


# the penalties ascending, and a field of each in that order
ASCENDING = 'repetition.penalties|map("float")|sort'


IN_ORDER = (
    "{% for p in " + ASCENDING + " %}{{ repetition.penalties[p|string].FIELD }}"
    '{{ " → " if not loop.last }}{% endfor %}'
)


TIMING = "repetition.timing"


ROUNDS = "라운드 {{ repetition.timing.runs_done }}회"


# The section's sentences (mminfer.records.sentences): repetition.md.j2 asks for them; the one
# beside temp.json (repetition.off_matches_temp) is this module's.
ALONE_SENTENCES = (
    Sentence(
        "repetition.distinct_trend",
        holds=decide.distinct_trend,
        words={
            word: (
                "repetition_penalty를 {{ " + ASCENDING + '|join(" → ")|particle("으로/로") }}'
                " 올리자 온도 {{ repetition.temperature }}에서 서로 다른 답이 샘플"
                " {{ repetition.samples }}개 중 "
                + IN_ORDER.replace("FIELD", "distinct")
                + "개로 "
                + verb
                + "."
            )
            for word, verb in MOVED.items()
        },
        check=recomputed,
    ),
    Sentence(
        "repetition.samples_never_loop",
        holds=decide.samples_never_loop,
        words="샘플한 답은 어느 페널티에서도 반복하지 않았다: 반복은 greedy 이어 쓰기에서 보인다.",
    ),
    Sentence(
        "repetition.greedy_repeats_trend",
        holds=decide.greedy_repeats_trend,
        words={
            word: (
                "greedy 이어 쓰기에서는 되풀이된 {{ repetition.loop_ngram }}-gram이 "
                + IN_ORDER.replace("FIELD", "greedy_repeated_ngrams")
                + "개로 "
                + verb
                + "."
            )
            for word, verb in MOVED.items()
        },
        check=recomputed,
    ),
    Sentence(
        "repetition.changes_answers",
        holds=decide.changed_from_off,
        words={
            "changed": (
                "페널티는 행이 본 토큰의 로짓을 깎아 고르는 답을 바꾸는 장치이지, 캐시처럼"
                " 같은 답을 싸게 내는 장치가 아니다."
            ),
            "nothing": (
                "이 실행에서는 어느 페널티도 샘플한 답과 greedy를 1.0과 다르게 바꾸지 않았다."
            ),
        },
    ),
    Sentence(
        "repetition.share",
        holds=decide.cost_of,
        words={
            "share": (
                "페널티의 몫은 전체 시간의 {{ " + TIMING + ".penalty_share_interval|percent_in }}다"
                "(라운드마다 짝지은 (페널티 − 없음) ÷ 페널티의 중앙값, " + ROUNDS + ")."
            ),
            "same": (
                "페널티가 있든 없든 시간이 잡음 문턱(5 %) 안에서 같았다: 몫은"
                " {{ " + TIMING + ".penalty_share_interval|percent_in }}다(" + ROUNDS + ")."
            ),
            "not_slower": (
                "**이 시간은 믿으면 안 된다**: 일을 더 하는 페널티 쪽이 "
                + ROUNDS
                + "에서 더 빨랐다"
                "(몫 {{ " + TIMING + ".penalty_share_interval|percent_in }}): 같은 때 돈 다른 일을"
                " 먼저 의심할 것."
            ),
            "undecided": (
                ROUNDS + "로는 페널티의 몫을 가를 수 없다: 라운드마다 짝지은 몫이"
                " {{ " + TIMING + ".penalty_share_interval|percent_in }}로 0을 사이에 둔다."
            ),
        },
        check=recomputed,
    ),
    Sentence(
        "repetition.glance_cost",
        holds=decide.cost_of,
        words={
            "share": "비용 {{ " + TIMING + ".penalty_share_interval|percent_in }}",
            "same": "비용: 잡음 문턱 안",
            "not_slower": "비용: 믿을 수 없음",
            "undecided": "비용: 라운드로 가를 수 없음",
        },
        check=recomputed,
    ),
)


def repetition_temp_facts(repetition: Repetition, temp: Temperatures | None = None) -> dict:
    """repetition.json's facts (mminfer.measures.repetition.repetition.repetition_facts) and
    penalty 1.0's distinct answers beside temp.json's at that temperature (``temp_distinct``)."""
    facts = repetition_facts(repetition)
    off = facts["off"]
    temp_row = temp.get(facts["temperature"]) if temp is not None else None
    temp_distinct = None if temp_row is None else temp_row.distinct
    compared = off is not None and temp_distinct is not None
    return facts | {
        "matches_temp": off.distinct == temp_distinct if compared else None,
        "temp_distinct": temp_distinct,
    }


def off_against_temp(repetition: Repetition, temp: Temperatures | None) -> str | None:
    """repetition.off_matches_temp: penalty 1.0's distinct answers against temp.json's at that
    temperature: "same", "differs"; None where either is missing."""
    off = repetition.penalties.get("1.0")
    row = None if temp is None else temp.get(repr(float(repetition.temperature)))
    if off is None or row is None:
        return None
    return "same" if off.distinct == row.distinct else "differs"


TEMP_ROW = "temp[repetition.temperature|float|string]"


REPETITION_SENTENCES = (
    Sentence(
        "repetition.off_matches_temp",
        holds=off_against_temp,
        words={
            "same": (
                "페널티 1.0 행은 temp.json의 온도 {{ repetition.temperature }} 행과 같은"
                " {{ " + TEMP_ROW + ".distinct }}개다: 1.0이면 generate가 페널티를 건너뛰어 같은"
                " 난수로 같은 답을 뽑는다."
            ),
            "differs": (
                '**페널티 1.0 행({{ repetition.penalties["1.0"].distinct }}개)이 temp.json의 같은'
                " 온도({{ " + TEMP_ROW + ".distinct }}개)와 다르다**: 같은 조건이라면 같아야 하므로"
                " 이 행은 믿으면 안 된다."
            ),
        },
    ),
)

# The section's sentences (mminfer.records.sentences), collected by render.sentence_table.
SENTENCES = (*ALONE_SENTENCES, *REPETITION_SENTENCES)
