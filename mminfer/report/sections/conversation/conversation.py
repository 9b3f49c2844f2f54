"""## 대화: conversation.json's facts, glance row and sentences, beside serve.json's users."""

from __future__ import annotations

from mminfer.measures.conversation import decide
from mminfer.measures.conversation.conversation import Conversation, visible
from mminfer.measures.serve.serve import Serve
from mminfer.records import Glance, within_rounding
from mminfer.records.sentences import Sentence, recomputed


def conversation_facts(conversation: Conversation) -> dict:
    """conversation.json's facts and verdicts for the report's section (conversation.md.j2).

    Whether the tokens fed follow their formulas and the answers are the same, the share of tokens
    the carried cache saves, each prefix break with its texts made visible, each timed turn, the
    shared prefix's saving and the pitfalls (each error's first line). Serve.json's users by
    memory beside the shared prefix's are this module's join: here
    ``serve_users`` is None and ``same_context`` does not hold.
    """
    turns = conversation.turns
    diverged = []
    for turn in decide.diverged_turns(conversation):
        difference = turn.first_difference
        rounding = None
        if difference is not None:
            rounding = within_rounding(
                difference.max_abs_logit_diff, difference.max_abs_logit, conversation.run.dtype
            )
        diverged.append({"turn": turn, "difference": difference, "rounding_sized": rounding})
    breaks = []
    for turn in turns:
        broke = turn.prefix_break
        if broke is None:
            continue
        breaks.append(
            {
                "turn": turn.turn,
                "break": broke,
                "held_text": visible(broke.held_text),
                "prompt_text": visible(broke.prompt_text),
                "before_text": visible(broke.before_text),
                "dropped": turn.held - turn.reused,
            }
        )
    timed = [turn for turn in turns if turn.timing is not None]
    shared = conversation.shared_prefix
    users_gain = None
    if shared.users_copied is not None and shared.users_copied > 0:
        users_gain = shared.users_shared_bound / shared.users_copied
    user_tokens = shared.prompt_len + shared.new_tokens  # P + N: one user's cache at the end
    pitfalls = []
    for pitfall in conversation.pitfalls:
        message = None
        if pitfall.error_message is not None:
            message = visible(pitfall.error_message.splitlines()[0][:160])
        pitfalls.append(
            {"pitfall": pitfall, "message": message, "lesson": decide.pitfall_lesson(pitfall)}
        )
    run = conversation.run
    last = turns[-1]
    return {
        "record": conversation,
        "turn_count": len(turns),
        "ids_past_tokenizer": sum(turn.ids_past_tokenizer for turn in turns),
        "fed_match": all(turn.fed_match for turn in turns) and conversation.totals_match,
        "saved_share": conversation.total_saved_tokens / conversation.total_fed_recompute,
        "prompt_ratio": conversation.prompt_tokens_recompute / conversation.prompt_tokens_carry,
        "last_reused_share": last.reused / last.prompt_len_carry,
        "diverged": diverged,
        "max_abs_logit_diff": max(turn.max_abs_logit_diff for turn in turns),
        "logits_equal": all(turn.max_abs_logit_diff == 0 for turn in turns),
        "breaks": breaks,
        "timed": timed,
        "timing_trusted": conversation.timing_verdict == "ok",
        "timing_untrusted": conversation.timing_verdict == "untrusted",
        "shared": shared,
        "shared_saving": shared.copied_tokens / shared.shared_bound_tokens,
        "users_gain": users_gain,
        "users_gain_known": users_gain is not None,
        "user_tokens": user_tokens,
        "serve_users": None,  # serve.json's users by memory: the report's join
        "same_context": False,
        "pitfalls": pitfalls,
        "device": run.device_name if run.device == "cuda" else "cpu",
        "dtype": run.dtype,
        "backend": run.backend,
        "threads": conversation.threads,
        "answers": decide.answers_of(conversation),
        "formulas": decide.formulas_of(conversation),
        "glance_lesson": decide.glance_lesson(conversation),
    }


def conversation_glance(conversation: Conversation) -> Glance:
    """## 대화's row: the tokens carrying saves; the lesson "same_saves" (the same answers, the
    counts on their formulas), "differs" (an answer or a count differs)."""
    same = conversation.same_answers and conversation.totals_match
    verdict = None if conversation.timing_verdict == "none" else conversation.timing_verdict
    return Glance(
        lesson="same_saves" if same else "differs",
        verdict=verdict,
        terms=("prefill", "carry", "recompute"),
    )


FALL = (
    "{% for shorter in conversation.turns if shorter.timing %}{% for longer in conversation.turns"
    " if longer.timing and longer.prompt_len > shorter.prompt_len"
    " and shorter.timing.recompute_interval.decisive and longer.timing.recompute_interval.decisive"
    " and shorter.timing.recompute_interval.low > longer.timing.recompute_interval.high %}"
    "턴 {{ shorter.turn }}(P = {{ shorter.prompt_len }})의 다시 계산 첫 토큰"
    " {{ shorter.timing.recompute_interval|ms_in }}, 턴 {{ longer.turn }}(P ="
    " {{ longer.prompt_len }})의 {{ longer.timing.recompute_interval|ms_in }}"
    '{{ "; " if not loop.last }}{% endfor %}{% endfor %}'
)


UNDECIDED_TURNS = (
    '{% for turn in conversation.turns if turn.timing and turn.timing.carry_faster != "yes" %}'
    '{{ turn.turn }}{{ ", " if not loop.last }}{% endfor %}'
)


SLOWER_TURNS = (
    '{% for turn in conversation.turns if turn.timing and turn.timing.carry_faster == "no" %}'
    '{{ turn.turn }}{{ ", " if not loop.last }}{% endfor %}'
)


DTYPE = "{{ conversation.run.dtype }}"


DEVICE = "{{ conversation.run.device_name if conversation.run.device == 'cuda' else 'cpu' }}"


PARTED = (
    "{% for turn in conversation.turns if not (turn.same_ids and turn.close_logits) %}"
    '{{ turn.turn }}{{ ", " if not loop.last }}{% endfor %}'
)


LAST = "conversation.turns[-1]"


SHARED = "conversation.shared_prefix"


# The section's sentences (mminfer.records.sentences), asked for by conversation.md.j2: the
# counts and ids exact (no check), the timed ones with a check from the raw runs.
ALONE_SENTENCES = (
    Sentence(
        "conversation.answers",
        holds=decide.answers_of,
        words={
            "diverged": (
                "**턴 "
                + PARTED
                + "에서 이어 쓰기와 다시\n계산의 답이 갈렸다**("
                + DTYPE
                + ", "
                + DEVICE
                + "): 아래 「같은 답인가」를 볼 것."
            ),
            "same_fewer": (
                "{{ conversation.turns|length }}턴 대화에서 직전 턴의 캐시를 이어 쓰자 `forward`에"
                " 넣은 토큰이\n{{ (conversation.total_saved_tokens"
                " / conversation.total_fed_recompute)|percent(0) }} 줄었고, 답은 모든 턴에서 다시"
                " 계산과 같았다(" + DTYPE + ",\n" + DEVICE + ")."
            ),
        },
        check=recomputed,
    ),
    Sentence(
        "conversation.formulas",
        holds=decide.formulas_of,
        words={
            "on": "모든 턴에서 두 방법의 측정이 공식과 같다 (첫 호출과 전체 모두).",
            "off": (
                "**공식과 다른 턴이 있다: `forward`에 들어간 토큰이 설명되지 않으므로 이 절의"
                " 숫자를 믿지 말 것.**"
            ),
        },
    ),
    Sentence(
        "conversation.reused",
        holds=decide.reused_of,
        words={
            "grows": (
                "재사용한 토큰은 턴마다 늘어, 마지막 턴에는 프롬프트의\n{{ ("
                + LAST
                + ".reused / "
                + LAST
                + ".prompt_len_carry)|percent }}를 캐시에서 다시 써 다시 계산하지 않았다."
            ),
            "not_grows": "재사용한 토큰이 턴마다 늘지는 않았다.",
        },
        check=recomputed,
    ),
    Sentence(
        "conversation.logits",
        holds=decide.logits_of,
        words={
            "equal": "모든 턴에서 두 방법의 답 id가 같고, 로짓도 비트 단위로 같다.",
            "within_rounding": (
                "모든 턴에서 두 방법의 답 id가 같다. 로짓 차이는 최대 {{ conversation.turns"
                "|map(attribute='max_abs_logit_diff')|max|sig|particle('으로/로') }},\n반올림이"
                " 낼 만한 허용치({{ conversation.logit_rtol|sig }} × (1 + 최대 로짓)) 안이다."
            ),
        },
    ),
    Sentence(
        "conversation.no_breaks",
        holds=decide.no_breaks,
        words=(
            "모든 턴에서 캐시가 가진 id 전체가 새 프롬프트의 접두사였다: 템플릿이 답을 생성된 id"
            " 그대로 다시\n렌더링했다(공통 접두사가 끊긴 턴이 없다)."
        ),
    ),
    Sentence(
        "conversation.shared_bytes",
        holds=decide.shared_bytes_of,
        words={
            "match": "공식과 같다",
            "differs": "**공식과 다르다: 공식은\n{{ " + SHARED + ".formula_bytes|fmt_bytes }}**",
        },
    ),
    Sentence(
        "conversation.prefix_copied",
        holds=decide.prefix_copied_of,
        words={
            "copied": (
                "모든 행에서 앞 {{ " + SHARED + ".shared_tokens }}개 위치의 K, V가 같다 — 공유한"
                " 접두사가 사용자 수만큼 복사돼 있다."
            ),
            "differ": (
                "**행마다 앞 {{ " + SHARED + ".shared_tokens }}개 위치의 K, V가 달랐다: 같은"
                " 접두사면 같아야 하므로 확인이\n필요하다.**"
            ),
        },
    ),
    Sentence(
        "conversation.carry_faster",
        holds=decide.carry_faster,
        words={
            "every": (
                "재사용이 있는 모든 턴에서 이어 쓰기의 첫 토큰이 다시 계산보다 빨랐다(턴마다"
                " 라운드로 짝지은 비율의 구간이 1 위)."
            ),
            "undecided": (
                "턴 " + UNDECIDED_TURNS + "에서는 라운드로 이어 쓰기가 다시 계산보다 빠른지 가를 수"
                " 없다: 그 턴의 시간은 구간으로만 읽을 것."
            ),
            "slower": (
                "**턴 " + SLOWER_TURNS + "에서 이어 쓰기가 다시 계산보다 느렸다**: 덜 넣는 쪽이"
                " 느릴 수 없으니 같은 때 돈 다른 일(기계)을 먼저 의심하고 이 시간들은 믿지 말 것."
            ),
        },
        check=recomputed,
    ),
    Sentence(
        "conversation.ttft_falls_as_prompt_grows",
        holds=decide.falls_as_prompt_grows,
        words=(
            "**" + FALL + "**: 프롬프트가 길수록 프리필이 더 걸려야 하므로, 이 차이는 프롬프트가"
            " 아니라 기계(같은 때 돈 다른 일)에서 왔다. 첫 토큰까지 시간은 구간으로만 읽을 것."
        ),
        check=recomputed,
    ),
    Sentence(
        "conversation.ttft_saved_grows",
        holds=decide.saved_grows,
        words={
            "grows": "아낀 시간도 재사용한 토큰과 함께 턴마다 늘었다(턴마다 구간이 겹치지 않는다).",
            "undecided": (
                "아낀 시간이 재사용한 토큰과 함께 턴마다 늘었는지는 구간이 겹쳐 가를 수 없다."
            ),
        },
        check=recomputed,
    ),
)


def conversation_serve_facts(conversation: Conversation, serve: Serve | None = None) -> dict:
    """conversation.json's facts (mminfer.measures.conversation.conversation.conversation_facts)
    and, with serve.json, its users by memory beside the shared prefix's: ``serve_users`` where
    both counted them, ``same_context`` where serve.json counted at this P + N."""
    serve_users = users_beside(conversation, serve)
    return conversation_facts(conversation) | {
        "serve_users": serve_users,
        "same_context": same_context(conversation, serve) == "same",
    }


def users_beside(conversation: Conversation, serve: Serve | None):
    """serve.json's users by memory, where both it and the conversation counted them."""
    counted = conversation.shared_prefix.users_copied is not None
    if counted and serve is not None and serve.users.users_by_memory is not None:
        return serve.users
    return None


def same_context(conversation: Conversation, serve: Serve | None) -> str | None:
    """conversation.same_context: serve.json counted its users at this P + N ("same") or at
    another context ("other"); None where either did not count them."""
    users = users_beside(conversation, serve)
    if users is None:
        return None
    shared = conversation.shared_prefix
    return "same" if users.context == shared.prompt_len + shared.new_tokens else "other"


CONVERSATION_SENTENCES = (
    Sentence(
        "conversation.same_context",
        holds=same_context,
        words={
            "same": "컨텍스트가 같으므로 위의 두 수와 바로 견줄 수 있다.",
            "other": "여기의 P + N과 컨텍스트가 달라 위의 두 수와 바로 견줄 수는 없다.",
        },
    ),
)

# The section's sentences (mminfer.records.sentences), collected by render.sentence_table.
SENTENCES = (*ALONE_SENTENCES, *CONVERSATION_SENTENCES)
