"""## KV 캐시's timing: time.json's facts and sentences, and its join with count.json.

The speedup and its spread, decided by time.json's decide.py (mminfer.measures.time.decide), and
the reason line: the time ratio against count.json's token ratio, and the fixed cost per call
that time.json's narrow side bounds.
"""

from __future__ import annotations

from mminfer.measures.cache.count import Count
from mminfer.measures.time.decide import (
    cache_faster,
    extra_rounds,
    fixed_cost_said,
    reason,
    spread,
)
from mminfer.measures.time.time import Timing
from mminfer.records import token_ratio
from mminfer.records.sentences import Sentence, recomputed

SPREADS = (
    "변동계수는 캐시 사용 {{ time.cv_with_cache|percent }},"
    " 미사용 {{ time.cv_without_cache|percent }}"
)


def time_facts(time: Timing) -> dict:
    """time.json and its verdict (see mminfer.measures.time.measure): ok, noisy, or untrusted.

    Its own record only: the speedup against the token ratio (count.json) and the reason they
    differ (sweep.json, anatomy.json) are this module's join. Its sentences
    are :data:`SENTENCES`."""
    return vars(time) | {
        "estimate": time.verdict == "noisy",  # the speedup is said as an estimate (≈)
        "trusted": time.verdict != "untrusted",
    }


ROUNDS = "라운드 {{ time.runs_done }}회"


# time.json's speedup, the one figure printed for it everywhere (the ratio of the medians, its
# interval from the medians' intervals); the decision is said in words, from the paired rounds
SPEEDUP = 'speedup {{ decide.time.speedup_medians(time)|x_in("time.speedup") }}'


# time.json's own sentences (mminfer.records.sentences): time.md.j2 and same.md.j2 ask for them;
# the speedup against the token ratio (time.reason) and the fixed cost (time.fixed_cost), beside
# count.json, are TIME_SENTENCES below.
ALONE_SENTENCES = (
    Sentence(
        "time.cache_faster",
        holds=cache_faster,
        words={
            "yes": (
                "캐시를 쓰면 생성이 " + SPEEDUP + "만큼 빠르다: " + ROUNDS + "를 라운드마다 짝지어"
                " 봐도 캐시 쪽이 빠르다."
            ),
            "same": (
                "생성 시간은 " + ROUNDS + "를 라운드마다 짝지어 보면 잡음 문턱(5 %) 안에서"
                " 같았다(" + SPEEDUP + ")."
            ),
            "no": (
                "**이 시간은 믿으면 안 된다**: 토큰을 덜 넣는 캐시가 짝지은 라운드"
                " {{ time.runs_done }}회에서 더 느렸다(" + SPEEDUP + "). 측정의 문제다: 조용할 때"
                " `snakemake -R time`으로 다시 잴 것."
            ),
            "undecided": (
                ROUNDS + "로는 캐시 쪽이 빠른지 가를 수 없다(" + SPEEDUP + "; 짝지은 라운드의 비로"
                " 판정). 조용할 때 `snakemake -R time`으로 다시 잴 것."
            ),
        },
        check=recomputed,
    ),
    Sentence(
        "time.spread",
        holds=spread,
        words={
            "within": SPREADS + "로 둘 다 {{ time.noisy_cv|percent }} 이하다",
            "over": SPREADS + "로 {{ time.noisy_cv|percent }}를 넘는 쪽이 있다",
        },
    ),
    Sentence(
        "time.extra_rounds",
        holds=extra_rounds,
        words=(
            "처음 {{ time.runs }}회로는 speedup을 가를 수 없어 {{ time.extra_rounds }}라운드를 더"
            " 쟀다"
        ),
        check=recomputed,
    ),
)


def time_count_facts(time: Timing, count: Count) -> dict:
    """time.json's facts (mminfer.measures.time.time.time_facts) with the token ratio of
    count.json beside the speedup; the reason the two differ is time.json's own narrow side
    (time.fixed_cost), timed in the same rounds."""
    return time_facts(time) | {"token_ratio": token_ratio(count)}


def time_reason(time: Timing, count: Count) -> str | None:
    """time.reason: decide.reason against count.json's token ratio."""
    return reason(time, token_ratio(count))


def time_fixed_cost(time: Timing, count: Count) -> str | None:
    """time.fixed_cost: decide.fixed_cost_said against count.json's token ratio."""
    return fixed_cost_said(time, token_ratio(count))


# Where time.json's rounds ran on a busy machine, a sentence that blames Python or the kernels
# names the load first (issue 47).
BUSY_TIME = "{{ 'time.json을 잴 때 기계가 바빴고, ' if time.contention and time.contention.busy }}"


RATIO = "{{ (count.fed_without_cache / count.fed_with_cache)|fmt('.1f') }}배"


NARROW = (
    "같은 라운드에서 잰 최소 폭 모델(층과 헤드는 그대로, 은닉 {{ time.narrow_shape.hidden_size }},"
    " 어휘 {{ time.narrow_shape.vocab_size }})의 같은 생성은 캐시 경로 시간의"
)


SHARE = " {{ time.fixed_share_interval|percent_in }}"
# the share's lower bound (decide.fixed_share_bound): its interval's low end as printed, floored
BOUND = " {{ (decide.time.fixed_share_bound(time) * 100)|fmt('g') }} %"


TIME_SENTENCES = (
    Sentence(
        "time.reason",
        holds=time_reason,
        words={
            "short": (
                "그런데 speedup은 라운드마다 짝지어 봐도 토큰 비율(" + RATIO + ")에 못 미친다:"
                " 캐시는 넣는 토큰을 줄여도 `forward` 호출 수(N = {{ time.new_tokens }})는"
                " 줄이지 못한다."
            ),
            "past": (
                "speedup이 토큰 비율(" + RATIO + ")보다 크다: 캐시 없는 경로는 어텐션이 문맥"
                " 길이의 제곱으로 커져 넣는 토큰보다 시간이 더 빨리 는다."
            ),
            "undecided": (
                "라운드 {{ time.runs_done }}회로는 speedup이 토큰 비율(" + RATIO + ")에 못"
                " 미치는지 가를 수 없다."
            ),
        },
        check=recomputed,
    ),
    Sentence(
        "time.fixed_cost",
        holds=time_fixed_cost,
        words={
            "at_least": (
                BUSY_TIME + NARROW + SHARE + "가 걸렸다: 적어도" + BOUND + "는 넣는 토큰 수와"
                " 무관하게 호출마다 드는 고정비(파이썬과 커널 호출)다."
            ),
            "almost_all": (
                BUSY_TIME + NARROW + SHARE + "가 걸렸다: 적어도" + BOUND + ", 곧 캐시 경로 시간의"
                " (거의) 모두가 호출마다 드는 고정비(파이썬과 커널 호출)다."
            ),
            "above": (
                NARROW + SHARE + "로 오히려 더 걸렸다: 이 기계에서는 최소 폭 모델이 고정비의"
                " 아래 한계가 되지 못해, 이 측정으로는 그 까닭을 가를 수 없다."
            ),
            "undecided": (
                "같은 라운드에서 잰 최소 폭 모델의 같은 생성이 캐시 경로 시간의 몇 %인지는"
                " 라운드 {{ time.runs_done }}회로는 가를 수 없다: 고정비의 몫은 말하지 않는다."
            ),
        },
        check=recomputed,
    ),
)

# The section's sentences (mminfer.records.sentences), collected by render.sentence_table.
SENTENCES = (*ALONE_SENTENCES, *TIME_SENTENCES)
