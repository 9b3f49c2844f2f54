"""The oracles of the sampling side's claims: conversation, repetition and batch
(mminfer.records.claims; merged into tests/oracles.py's ORACLES). topp's, topk's, temp's and
sampler's sentences are checked by their own predicates, beside their words (their SENTENCES).

Each reads its sentence's literal words against the record's raw numbers: the counts of each
temperature, penalty and p in the order of their values, the greedy ids (their repeated n-grams
counted here), the timed runs' seconds (medians and spreads computed here, the verdict never
read), the turns' ids and token counts against their formulas; never the facts' booleans.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections import Counter
from collections.abc import Callable, Mapping


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def spread(runs: list[float]) -> float:
    """The runs' coefficient of variation (sample standard deviation over the mean)."""
    return statistics.stdev(runs) / statistics.mean(runs) if len(runs) > 1 else 0.0


def moves(values: list, word: str) -> bool:
    """Do ``values`` move as ``word`` says, read literally? Every pair of neighbours judged."""
    pairs = list(itertools.pairwise(values))
    up = [a < b for a, b in pairs]
    down = [a > b for a, b in pairs]
    if not pairs:
        return False
    literal = {
        "grows": all(up),  # 늘었다: up at every step
        "shrinks": all(down),
        "flat": not any(up) and not any(down),
        "same": not any(up) and not any(down),
        "rises": not any(down) and any(up) and not all(up),  # 줄지 않고 늘거나 그대로였다
        "falls": not any(up) and any(down) and not all(down),
        "more": not any(down) and any(up),  # 늘었다 (repetition: never down, up somewhere)
        "fewer": not any(up) and any(down),
        "mixed": any(up) and any(down),
    }
    return literal[word]


def ascending(mapping: Mapping) -> list[str]:
    return sorted(mapping, key=float)


# --- repetition -----------------------------------------------------------------------------------


def repeated(ids: list[int], n: int) -> int:
    """The n-grams of ``ids`` that repeat an earlier one (counted here, not by mminfer)."""
    counts = Counter(tuple(ids[i : i + n]) for i in range(len(ids) - n + 1))
    return sum(count - 1 for count in counts.values())


def repetition_distinct_trend(records, about) -> bool:
    """ "repetition_penalty를 {ascending}로 올리자 서로 다른 답이 {counts}개로 {trend}"."""
    penalties = records["repetition"].penalties
    keys = ascending(penalties)
    counts = [penalties[key].distinct for key in keys]
    return (
        list(about["ascending"]) == keys
        and list(about["counts"]) == counts
        and moves(counts, about["trend"])
    )


def repetition_greedy_repeats_trend(records, about) -> bool:
    """ "greedy 이어 쓰기에서는 되풀이된 {n}-gram이 {repeats}개로 {trend}", penalties rising."""
    repetition = records["repetition"]
    keys = ascending(repetition.penalties)
    n = repetition.loop_ngram
    repeats = [repeated(repetition.penalties[key].greedy_ids, n) for key in keys]
    return (
        about["n"] == n
        and list(about["ascending"]) == keys
        and list(about["repeats"]) == repeats
        and moves(repeats, about["trend"])
    )


def repetition_samples_never_loop(records, about) -> bool:
    """ "샘플한 답은 어느 페널티에서도 반복하지 않았다"."""
    return all(penalty.looping == 0 for penalty in records["repetition"].penalties.values())


def changed_from_off(records) -> list[str] | None:
    penalties = records["repetition"].penalties
    off = penalties.get("1.0")
    if off is None:
        return None

    def drawn(penalty):
        return [(a.answer, a.count) for a in penalty.answers], penalty.greedy_ids

    return [key for key in ascending(penalties) if drawn(penalties[key]) != drawn(off)]


def repetition_changes_answers(records, about) -> bool:
    """ "페널티는 ... 고르는 답을 바꾸는 장치": some penalty's answers or greedy ids differ."""
    changed = changed_from_off(records)
    return bool(changed) and list(about["changed"]) == changed


def repetition_changed_nothing(records, about) -> bool:
    """ "어느 페널티도 샘플한 답과 greedy를 1.0과 다르게 바꾸지 않았다"."""
    changed = changed_from_off(records)
    return changed is not None and len(records["repetition"].penalties) > 1 and not changed


def off_and_temp(records) -> tuple[int, int] | None:
    repetition, temp = records["repetition"], records.get("temp")
    off = repetition.penalties.get("1.0")
    key = repr(float(repetition.temperature))
    if off is None or temp is None or key not in temp:
        return None
    return off.distinct, temp[key].distinct


def repetition_off_matches_temp(records, about) -> bool:
    """ "페널티 1.0 행은 temp.json의 같은 온도 행과 같은 {distinct}개다"."""
    pair = off_and_temp(records)
    return pair is not None and pair[0] == pair[1] == about["distinct"]


def repetition_off_differs(records, about) -> bool:
    """ "페널티 1.0 행({off}개)이 temp.json의 같은 온도({temp}개)와 다르다"."""
    pair = off_and_temp(records)
    return pair is not None and pair[0] != pair[1] and pair == (about["off"], about["temp"])


def penalty_runs(records) -> tuple[list[float], list[float], float]:
    timing = records["repetition"].timing
    return timing.with_penalty_runs_s, timing.without_penalty_runs_s, timing.noisy_cv


def share_of(with_runs: list[float], without_runs: list[float]) -> float:
    with_s = statistics.median(with_runs)
    return (with_s - statistics.median(without_runs)) / with_s


def repetition_share(records, about) -> bool:
    """ "페널티의 몫은 전체 시간의 {share}다" as a measurement: both spreads within noisy_cv, the
    penalty slower, the share the medians'."""
    with_runs, without_runs, noisy = penalty_runs(records)
    return (
        statistics.median(with_runs) > statistics.median(without_runs)
        and max(spread(with_runs), spread(without_runs)) <= noisy
        and close(about["share"], share_of(with_runs, without_runs))
    )


def repetition_share_estimate(records, about) -> bool:
    """ "페널티의 몫은 어림잡아 {share}다: 퍼짐이 {cv}로 {noisy_cv}를 넘어 어림일 뿐이다"."""
    with_runs, without_runs, noisy = penalty_runs(records)
    cv = max(spread(with_runs), spread(without_runs))
    return (
        statistics.median(with_runs) > statistics.median(without_runs)
        and cv > noisy
        and close(about["cv"], cv)
        and about["noisy_cv"] == noisy
        and close(about["share"], share_of(with_runs, without_runs))
    )


def repetition_not_slower(records, about) -> bool:
    """ "일을 더 하는 페널티 쪽이 느리지 않게 나왔다"."""
    with_runs, without_runs, _ = penalty_runs(records)
    return statistics.median(with_runs) <= statistics.median(without_runs)


# --- batch ----------------------------------------------------------------------------------------


def batch_every_row_same(records, about) -> bool:
    """ "{rows}개 행 모두 혼자 생성한 것과 같은 토큰을 냈다"."""
    rows = records["batch"].rows
    return about["rows"] == len(rows) and all(row.same_ids and row.finite for row in rows)


def batch_runs(records) -> tuple[list[float], list[float], float]:
    timing = records["batch"].timing
    return timing.batch_runs_s, timing.sequential_runs_s, timing.noisy_cv


def batch_cheaper(records, about) -> bool:
    """ "배치는 ... 같은 결과를 싸게 얻는 방법이다(가장 느린 배치 {slowest_batch_s}도 가장 빠른 한
    행씩 {fastest_sequential_s}보다 빨랐다)": the same tokens, every batch run faster than every
    one-by-one run, on a quiet clock."""
    batch, sequential, noisy = batch_runs(records)
    return (
        all(row.same_ids and row.finite for row in records["batch"].rows)
        and max(batch) < min(sequential)
        and max(spread(batch), spread(sequential)) <= noisy
        and about["slowest_batch_s"] == max(batch)
        and about["fastest_sequential_s"] == min(sequential)
    )


def batch_ranges_meet(records, about) -> bool:
    """ "가장 빠른 한 행씩 {fastest_sequential_s}이 가장 느린 배치 {slowest_batch_s}보다 느리지
    않아"."""
    batch, sequential, _ = batch_runs(records)
    return (
        min(sequential) <= max(batch)
        and about["slowest_batch_s"] == max(batch)
        and about["fastest_sequential_s"] == min(sequential)
    )


def batch_speedup(batch: list[float], sequential: list[float]) -> float:
    return statistics.median(sequential) / statistics.median(batch)


def batch_faster(records, about) -> bool:
    """ "배치가 한 행씩보다 {speedup}배 빨랐다" as a measurement (both spreads within noisy_cv)."""
    batch, sequential, noisy = batch_runs(records)
    return (
        statistics.median(batch) < statistics.median(sequential)
        and max(spread(batch), spread(sequential)) <= noisy
        and close(about["speedup"], batch_speedup(batch, sequential))
    )


def batch_faster_estimate(records, about) -> bool:
    """ "배치가 한 행씩보다 어림잡아 {speedup}배 빨랐다: 퍼짐이 {cv}로 {noisy_cv}를 넘어"."""
    batch, sequential, noisy = batch_runs(records)
    cv = max(spread(batch), spread(sequential))
    return (
        statistics.median(batch) < statistics.median(sequential)
        and cv > noisy
        and close(about["cv"], cv)
        and close(about["speedup"], batch_speedup(batch, sequential))
    )


def batch_not_faster(records, about) -> bool:
    """ "배치가 한 행씩보다 빠르지 않았다"."""
    batch, sequential, _ = batch_runs(records)
    return statistics.median(batch) >= statistics.median(sequential)


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
    return moves([turn.reused for turn in turns], "grows") and close(
        about["last_share"], last.reused / last.prompt_len_carry
    )


def conversation_reused_not_grows(records, about) -> bool:
    """ "재사용한 토큰이 턴마다 늘지는 않았다"."""
    return not moves([turn.reused for turn in records["conversation"].turns], "grows")


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


def timed_turns(records) -> list:
    return [turn for turn in records["conversation"].turns if turn.timing is not None]


def medians(turn) -> tuple[float, float]:
    """(recompute, carry): the medians of the turn's own runs."""
    timing = turn.timing
    return statistics.median(timing.recompute_runs_s), statistics.median(timing.carry_runs_s)


def turn_spread_over(turn, threshold: float) -> bool:
    """A turn's carry or recompute runs spread over ``threshold`` (their own CV)."""
    timing = turn.timing
    return max(cv_of(timing.carry_runs_s), cv_of(timing.recompute_runs_s)) > threshold


def cv_of(values) -> float:
    if len(values) < 2:
        return 0.0
    return statistics.stdev(values) / statistics.mean(values)


def conversation_noisy_spread_over(records, about) -> bool:
    """ "턴 {turns}의 첫 토큰까지 시간이 흔들렸다": at every turn named, a method's runs spread
    over the threshold."""
    named = [turn for turn in timed_turns(records) if turn.turn in about["turns"]]
    threshold = records["conversation"].noisy_cv
    return (
        bool(named)
        and len(named) == len(about["turns"])
        and all(turn_spread_over(turn, threshold) for turn in named)
    )


def conversation_all_spread_over(records, about) -> bool:
    """ "잰 모든 턴의 첫 토큰까지 시간이 흔들렸다": every timed turn's runs spread so."""
    timed = timed_turns(records)
    threshold = records["conversation"].noisy_cv
    return bool(timed) and all(turn_spread_over(turn, threshold) for turn in timed)


def conversation_carry_not_faster(records, about) -> bool:
    """ "이어 쓰기가 빠르지 않은 턴이 있다(턴 {turns})": at every turn named, by its runs."""
    named = [turn for turn in timed_turns(records) if turn.turn in about["turns"]]
    return (
        bool(named)
        and len(named) == len(about["turns"])
        and all(medians(turn)[1] >= medians(turn)[0] for turn in named)
    )


def conversation_ttft_saved_grows(records, about) -> bool:
    """ "아낀 시간도 재사용한 토큰과 함께 턴마다 늘었다": every timed turn on a quiet clock with
    carry faster, the time saved and the tokens reused rising turn after turn."""
    noisy = records["conversation"].noisy_cv
    timed = timed_turns(records)
    quiet = all(
        max(spread(t.timing.recompute_runs_s), spread(t.timing.carry_runs_s)) <= noisy
        and medians(t)[1] < medians(t)[0]
        for t in timed
    )
    saved = [medians(turn)[0] - medians(turn)[1] for turn in timed]
    return (
        len(timed) > 1
        and quiet
        and moves(saved, "grows")
        and moves([turn.reused for turn in timed], "grows")
    )


def conversation_ttft_falls_as_prompt_grows(records, about) -> bool:
    """ "턴 {shorter_turn}(P = {shorter_prompt})의 다시 계산 첫 토큰 {shorter_s}가 턴
    {longer_turn}(P = {longer_prompt})의 {longer_s}보다 {noisy_cv} 넘게 길었다"."""
    turns = {turn.turn: turn for turn in timed_turns(records)}
    shorter = turns.get(about.get("shorter_turn"))
    longer = turns.get(about.get("longer_turn"))
    if shorter is None or longer is None:
        return False
    noisy = records["conversation"].noisy_cv
    return (
        shorter.prompt_len < longer.prompt_len
        and about["shorter_prompt"] == shorter.prompt_len
        and about["longer_prompt"] == longer.prompt_len
        and close(about["shorter_s"], medians(shorter)[0])
        and close(about["longer_s"], medians(longer)[0])
        and medians(shorter)[0] > medians(longer)[0] * (1 + noisy)
        and about["noisy_cv"] == noisy
    )


ORACLES: dict[str, Callable[[Mapping, Mapping], bool]] = {
    "repetition.distinct_trend": repetition_distinct_trend,
    "repetition.greedy_repeats_trend": repetition_greedy_repeats_trend,
    "repetition.samples_never_loop": repetition_samples_never_loop,
    "repetition.changes_answers": repetition_changes_answers,
    "repetition.changed_nothing": repetition_changed_nothing,
    "repetition.off_matches_temp": repetition_off_matches_temp,
    "repetition.off_differs": repetition_off_differs,
    "repetition.share": repetition_share,
    "repetition.share_estimate": repetition_share_estimate,
    "repetition.not_slower": repetition_not_slower,
    "batch.every_row_same": batch_every_row_same,
    "batch.cheaper": batch_cheaper,
    "batch.ranges_meet": batch_ranges_meet,
    "batch.faster": batch_faster,
    "batch.faster_estimate": batch_faster_estimate,
    "batch.not_faster": batch_not_faster,
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
    "conversation.noisy_spread_over": conversation_noisy_spread_over,
    "conversation.all_spread_over": conversation_all_spread_over,
    "conversation.carry_not_faster": conversation_carry_not_faster,
    "conversation.ttft_saved_grows": conversation_ttft_saved_grows,
    "conversation.ttft_falls_as_prompt_grows": conversation_ttft_falls_as_prompt_grows,
}
