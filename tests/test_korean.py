"""Korean particles after numbers follow the Sino-Korean reading (mminfer.report.korean)."""

from __future__ import annotations

import pytest

from mminfer.report.korean import particle, particle_for, reading_final, written
from mminfer.report.render import environment

# Each digit's reading: 영 일 이 삼 사 오 육 칠 팔 구.
DIGITS = {0: "은", 1: "은", 2: "는", 3: "은", 4: "는", 5: "는", 6: "은", 7: "은", 8: "은", 9: "는"}


@pytest.mark.parametrize("digit", DIGITS)
def test_a_digit_takes_the_particle_of_its_reading(digit):
    assert particle_for(digit, "은/는") == DIGITS[digit]


@pytest.mark.parametrize(
    ("number", "expected"),
    [
        (32, "32는"),  # 삼십이: the B = 32
        (16, "16은"),  # 십육
        (64, "64는"),  # 육십사
        (128, "128은"),  # 백이십팔
        (256, "256은"),  # 이백오십육
        (2274, "2274는"),  # 이천이백칠십사
        (10, "10은"),  # 십
        (20, "20은"),  # 이십
        (300, "300은"),  # 삼백
        (5000, "5000은"),  # 오천
        (12000, "12000은"),  # 만 이천
        (10000, "10000은"),  # 만
        (100000, "100000은"),  # 십만
        (300000000, "300000000은"),  # 삼억
        (10**12, "1000000000000는"),  # 일조
        (10**16, "10000000000000000은"),  # 일경
        (10002, "10002는"),  # 만 이
    ],
)
def test_an_integer_is_read_to_its_lowest_nonzero_digit(number, expected):
    assert particle(number, "은/는") == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2,274", "2,274는"),
        ("1,000", "1,000은"),
        ("1.5", "1.5는"),  # 일 점 오
        ("2.0", "2.0은"),  # 이 점 영: as shown, not as the value
        ("0.25", "0.25는"),
        ("3.16", "3.16은"),  # 삼 점 일육
        ("B = 32", "B = 32는"),
        ("-3", "-3은"),
        ("32개", "32개는"),  # a unit after the number: its own syllable decides
        ("16토큰", "16토큰은"),
        ("39%", "39%는"),  # 퍼센트
        ("5.3×", "5.3×는"),  # 배
        (" 7 ", "7은"),
    ],
)
def test_text_is_read_as_it_is_shown(text, expected):
    assert particle(text, "은/는") == expected


def test_floats_are_read_in_their_plain_form():
    assert particle(1.5, "은/는") == "1.5는"
    assert particle(2.0, "이/가") == "2.0이"


@pytest.mark.parametrize(
    ("number", "pair", "expected"),
    [
        (32, "이/가", "가"),
        (16, "이/가", "이"),
        (32, "을/를", "를"),
        (16, "을/를", "을"),
        (32, "과/와", "와"),
        (16, "과/와", "과"),
        (32, "이다/다", "다"),
        (16, "이다/다", "이다"),
        (32, "이고/고", "고"),
        (16, "이며/며", "이며"),
        (32, "이나/나", "나"),
        (16, "이라/라", "이라"),
    ],
)
def test_each_pair_takes_its_vowel_or_consonant_form(number, pair, expected):
    assert particle_for(number, pair) == expected


@pytest.mark.parametrize(
    ("number", "expected"),
    [
        (1, "1로"),  # 일: ㄹ takes 로
        (7, "7로"),
        (8, "8로"),
        (2, "2로"),  # 이: a vowel
        (10, "10으로"),  # 십
        (16, "16으로"),  # 십육
        (0, "0으로"),  # 영
        (1000, "1000으로"),  # 천
        ("32개", "32개로"),
        ("3.1", "3.1로"),  # 삼 점 일
        ("하늘", "하늘로"),
    ],
)
def test_euro_ro_takes_ro_after_rieul_and_vowels(number, expected):
    assert particle(number, "으로/로") == expected


def test_rieul_is_a_consonant_for_every_other_pair():
    assert particle(1, "은/는") == "1은" and particle(8, "과/와") == "8과"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("12.50 ms", "12.50 ms는"),  # 밀리초
        ("3 µs", "3 µs는"),
        ("0.5 s", "0.5 s는"),  # 초
        ("1,024 B", "1,024 B는"),  # 바이트
        ("2,048 B (2.0 KiB)", "2,048 B (2.0 KiB)는"),  # read before the parenthesis
        ("1.50 GiB", "1.50 GiB는"),
    ],
)
def test_units_in_latin_letters_are_read_in_korean(text, expected):
    assert particle(text, "은/는") == expected


@pytest.mark.parametrize("unread", ["—", "", "n/a", None, float("nan"), float("inf"), 1e-5])
def test_a_text_without_a_reading_takes_both_forms(unread):
    assert particle_for(unread, "은/는") == "은(는)"
    assert particle_for(unread, "이/가") == "이(가)"
    assert particle_for(unread, "으로/로") == "(으)로"
    assert particle_for(unread, "이다/다") == "(이)다"


def test_none_is_shown_as_the_reports_dash():
    assert particle(None, "이/가") == "—이(가)"


def test_a_truth_value_is_not_a_number():
    with pytest.raises(TypeError):
        particle(True, "은/는")


def test_an_unknown_pair_is_refused():
    with pytest.raises(ValueError, match="unknown particle pair"):
        particle(3, "에/에서")


def test_reading_final_names_the_consonant():
    assert reading_final(16) == "ㄱ" and reading_final(10) == "ㅂ" and reading_final(32) is None


def test_the_report_templates_have_the_filter():
    env = environment()
    text = env.from_string(
        'B = {{ b | particle("은/는") }}, {{ n | thousands | particle("이/가") }}'
    )
    assert text.render(b=32, n=1000) == "B = 32는, 1,000이"


@pytest.mark.parametrize(
    "value, shown",
    [
        (9.54e-07, "9.54 × 10⁻⁷"),
        (2.29e-06, "2.29 × 10⁻⁶"),
        (1e-06, "1 × 10⁻⁶"),
        (3.2e12, "3.2 × 10¹²"),
        (0.001, "0.001"),
        (12.5, "12.5"),
    ],
)
def test_a_power_of_ten_is_written_as_korean_reads_it(value, shown):
    assert written(value) == shown


@pytest.mark.parametrize("value", [9.54e-07, 2.29e-06, 1e-06, 5.7e-06, 3.2e12])
def test_a_power_of_ten_ends_in_seung_and_takes_the_consonant_form(value):
    # 십의 마이너스 칠 승: every exponent ends in 승 (ㅇ)
    text = written(value)
    assert reading_final(text) == "ㅇ"
    assert particle(text, "으로/로") == text + "으로"
    assert particle(text, "은/는") == text + "은"
    assert "(" not in particle_for(text, "이/가")


def test_the_sig_filter_writes_no_e_notation():
    env = environment()
    text = env.from_string('최대 {{ x | sig | particle("으로/로") }}')
    assert text.render(x=2.29e-06) == "최대 2.29 × 10⁻⁶으로"


def test_no_golden_report_shows_e_notation_or_both_particle_forms():
    import re

    from reportcases import both, cases

    for name in sorted(cases()):  # each case's whole reports (its golden file pins only a part)
        text = both(name)
        assert "(으)" not in text, name
        assert not re.search(r"\de[+-]\d", text), name
