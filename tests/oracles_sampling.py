"""The oracles of the conversation's claims on its tokens and answers (mminfer.records.claims;
merged into tests/oracles.py's ORACLES). Repetition's, batch's, topk's and the conversation's
timed sentences are checked by their own predicates beside their words (their SENTENCES), a
timed one also by its check on the raw runs (tests/test_claims_sampling.py).

Each reads its sentence's literal words against the record's raw numbers: the turns' ids and
token counts against their formulas; never the facts' booleans.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def grows(values: list) -> bool:
    """Up at every step, read literally."""
    return len(values) > 1 and all(a < b for a, b in itertools.pairwise(values))


# --- conversation ---------------------------------------------------------------------------------


def turn_same(turn, rtol: float) -> bool:
    """The turn's answers the same both ways: the ids, and the logits within rounding."""
    within = turn.max_abs_logit_diff <= rtol * (1 + turn.max_abs_logit)
    return turn.ids == turn.ids_carry and within


def conversation_same_fewer(records, about) -> bool:
    """ "넣은 토큰이 {share} 줄었고, 답은 모든 턴에서 다시 계산과 같았다"."""
    conversation = records["conversation"]
    turns = conversation.turns
    recompute = sum(turn.fed_recompute for turn in turns)
    carry = sum(turn.fed_carry for turn in turns)
    return (
        all(turn_same(turn, conversation.logit_rtol) for turn in turns)
        and carry < recompute
        and close(about["share"], (recompute - carry) / recompute)
    )


def conversation_diverged(records, about) -> bool:
    """ "턴 {turns}에서 이어 쓰기와 다시 계산의 답이 갈렸다"."""
    conversation = records["conversation"]
    parted = [t.turn for t in conversation.turns if not turn_same(t, conversation.logit_rtol)]
    return bool(parted) and list(about["turns"]) == parted


def on_formulas(turn) -> bool:
    prompt, reused = turn.prompt_len, turn.reused
    carry_prompt = turn.prompt_len_carry - reused
    return (
        turn.fed_first_recompute == prompt
        and turn.fed_first_carry == carry_prompt
        and turn.fed_recompute == prompt + len(turn.ids) - 1
        and turn.fed_carry == carry_prompt + len(turn.ids_carry) - 1
    )


def conversation_fed_on_formulas(records, about) -> bool:
    """ "모든 턴에서 두 방법의 측정이 공식과 같다 (첫 호출과 전체 모두)"."""
    conversation = records["conversation"]
    turns = conversation.turns
    return (
        all(on_formulas(turn) for turn in turns)
        and conversation.total_fed_recompute == sum(turn.fed_recompute for turn in turns)
        and conversation.total_fed_carry == sum(turn.fed_carry for turn in turns)
    )


def conversation_fed_off_formulas(records, about) -> bool:
    """ "공식과 다른 턴이 있다"."""
    return not conversation_fed_on_formulas(records, about)


def conversation_reused_grows(records, about) -> bool:
    """ "재사용한 토큰은 턴마다 늘어, 마지막 턴에는 프롬프트의 {last_share}를 캐시에서 다시 써"."""
    turns = records["conversation"].turns
    last = turns[-1]
    return grows([turn.reused for turn in turns]) and close(
        about["last_share"], last.reused / last.prompt_len_carry
    )


def conversation_reused_not_grows(records, about) -> bool:
    """ "재사용한 토큰이 턴마다 늘지는 않았다"."""
    return not grows([turn.reused for turn in records["conversation"].turns])


def conversation_logits_equal(records, about) -> bool:
    """ "모든 턴에서 두 방법의 답 id가 같고, 로짓도 비트 단위로 같다"."""
    turns = records["conversation"].turns
    return all(turn.ids == turn.ids_carry and turn.max_abs_logit_diff == 0 for turn in turns)


def conversation_logits_within_rounding(records, about) -> bool:
    """ "모든 턴에서 두 방법의 답 id가 같다. 로짓 차이는 최대 {largest}, 허용치 안이다"."""
    conversation = records["conversation"]
    turns = conversation.turns
    largest = max(turn.max_abs_logit_diff for turn in turns)
    return (
        all(turn_same(turn, conversation.logit_rtol) for turn in turns)
        and largest > 0
        and about["largest"] == largest
    )


def conversation_no_breaks(records, about) -> bool:
    """ "모든 턴에서 캐시가 가진 id 전체가 새 프롬프트의 접두사였다"."""
    return all(turn.prefix_break is None for turn in records["conversation"].turns)


def conversation_shared_bytes_match(records, about) -> bool:
    """ "(공유 접두사의 캐시 크기는) 공식과 같다": the bytes measured against the formula's,
    the formula's own tokens those the returned cache holds (B x held, as its K's shape)."""
    shared = records["conversation"].shared_prefix
    rows, held = shared.k_shape[0], shared.k_shape[1]
    return (
        shared.measured_bytes == shared.formula_bytes
        and (rows, held) == (shared.users, shared.held_tokens)
        and shared.held_tokens == shared.prompt_len + shared.new_tokens - 1
    )


def conversation_prefix_copied(records, about) -> bool:
    """ "모든 행에서 앞 S개 위치의 K, V가 같다": the record's measured check of every row."""
    shared = records["conversation"].shared_prefix
    return shared.prefix_rows_identical and about["users"] == shared.users


def conversation_same_context(records, about) -> bool:
    """ "컨텍스트가 같으므로 위의 두 수와 바로 견줄 수 있다"."""
    shared = records["conversation"].shared_prefix
    serve = records.get("serve")
    context = shared.prompt_len + shared.new_tokens
    return serve is not None and serve.users.context == context == about["context"]


ORACLES: dict[str, Callable[[Mapping, Mapping], bool]] = {
    "conversation.same_fewer": conversation_same_fewer,
    "conversation.diverged": conversation_diverged,
    "conversation.fed_on_formulas": conversation_fed_on_formulas,
    "conversation.fed_off_formulas": conversation_fed_off_formulas,
    "conversation.reused_grows": conversation_reused_grows,
    "conversation.reused_not_grows": conversation_reused_not_grows,
    "conversation.logits_equal": conversation_logits_equal,
    "conversation.logits_within_rounding": conversation_logits_within_rounding,
    "conversation.no_breaks": conversation_no_breaks,
    "conversation.shared_bytes_match": conversation_shared_bytes_match,
    "conversation.prefix_copied": conversation_prefix_copied,
    "conversation.same_context": conversation_same_context,
}
