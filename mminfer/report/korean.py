"""Korean particles after a number: the particle follows how the number is read aloud.

A Korean particle has one form after a final consonant and one after a vowel (은/는, 이/가, 을/를,
과/와, 으로/로, 이다/다). After a number the choice follows its Sino-Korean reading: "B = 32는"
(삼십이 ends in a vowel), "16은" (십육 ends in ㄱ), "1,000은" (천), "1.5는" (일 점 오). 으로/로
takes 로 after ㄹ as after a vowel: "1로" (일), "10으로" (십).

How a number's reading ends:

- an integer: its lowest non-zero digit decides. In the lowest four-digit group it is read as the
  digit (영 일 이 삼 사 오 육 칠 팔 구) or, with zeros after it, as 십, 백 or 천; a number whose
  lowest four digits are all zero ends in the group's unit (만, 억, 조, 경): 20 이십, 300 삼백,
  120000 십이만;
- a decimal fraction is read digit by digit after 점, so its last written digit decides: "2.0" is
  이 점 영, "0.25" is 영 점 이오;
- text that ends in a Hangul syllable (a unit written after the number: "32개", "16토큰") takes
  that syllable's final consonant; a unit in Latin letters or a sign is read in Korean ("%"
  퍼센트, "×" 배, "ms" 밀리초, "B" 바이트, "GiB" 기비바이트: all end in a vowel); a parenthesis at
  the end ("1,024 B (1.0 KiB)") is read past;
- a number in scientific notation is written as Korean reads it, "9.54 × 10⁻⁷" (:func:`written`,
  the report's filter ``sig``), read 구 점 오사 곱하기 십의 마이너스 칠 승: it ends in 승 (ㅇ),
  so "9.54 × 10⁻⁷으로", whatever the exponent;
- text with no reading ("—", a figure not measured; "nan"; Python's "1e-05", never shown in the
  report: write it first) takes both forms, as Korean writes them where the reading is unknown:
  "—은(는)", "(으)로".

Used in report templates as the filter ``particle``: ``{{ batch | particle("은/는") }}`` gives
"32는". Format the number first (``{{ x | thousands | particle("은/는") }}``): the text as shown
is what is read.
"""

from __future__ import annotations

import math
import numbers
import re

# The final consonant of each digit's Sino-Korean reading (None: it ends in a vowel).
DIGIT_FINALS = {
    "0": "ㅇ",  # 영
    "1": "ㄹ",  # 일
    "2": None,  # 이
    "3": "ㅁ",  # 삼
    "4": None,  # 사
    "5": None,  # 오
    "6": "ㄱ",  # 육
    "7": "ㄹ",  # 칠
    "8": "ㄹ",  # 팔
    "9": None,  # 구
}
# A digit with 1, 2 or 3 zeros after it inside its four-digit group ends in 십, 백 or 천.
PLACE_FINALS = {1: "ㅂ", 2: "ㄱ", 3: "ㄴ"}
# A number whose lower groups are all zero ends in its group's unit: 만, 억, 조, 경, 해.
GROUP_FINALS = {1: "ㄴ", 2: "ㄱ", 3: None, 4: "ㅇ", 5: None}
# Units and signs written after a number, as read: 퍼센트, 배, 밀리초, 마이크로초, 나노초, 초,
# 바이트, 키비·메비·기비바이트, 메가·기가바이트; every one ends in a vowel.
UNIT_FINALS = {
    "%": None,
    "×": None,
    "ms": None,
    "µs": None,
    "ns": None,
    "s": None,
    "B": None,
    "KiB": None,
    "MiB": None,
    "GiB": None,
    "MB": None,
    "GB": None,
}
UNIT_AT_END = re.compile(r"\d\s*(%|×|ms|µs|ns|s|B|KiB|MiB|GiB|MB|GB)$")
PARENTHESIS_AT_END = re.compile(r"\s*\([^()]*\)$")  # "1,024 B (1.0 KiB)": read before it

# (after a final consonant, after a vowel); 으로/로 also takes 로 after ㄹ.
PAIRS = {
    "은/는": ("은", "는"),
    "이/가": ("이", "가"),
    "을/를": ("을", "를"),
    "과/와": ("과", "와"),
    "으로/로": ("으로", "로"),
    "이다/다": ("이다", "다"),
    "이고/고": ("이고", "고"),
    "이며/며": ("이며", "며"),
    "이나/나": ("이나", "나"),
    "이라/라": ("이라", "라"),
}
# The Hangul final consonants in syllable order; index 0 (a space) is a syllable without one.
HANGUL_FINALS = " ㄱㄲㄳㄴㄵㄶㄷㄹㄺㄻㄼㄽㄾㄿㅀㅁㅂㅄㅅㅆㅇㅈㅊㅋㅌㅍㅎ"
NUMBER_AT_END = re.compile(r"(\d[\d,]*)(\.\d+)?$")
SCIENTIFIC = re.compile(r"\de[+-]?\d+$")
# "× 10⁻⁷", read 곱하기 십의 마이너스 칠 승: a power of ten ends in 승.
POWER_OF_TEN_AT_END = re.compile(r"\d\s*×\s*10[⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+$")
POWER_FINAL = "ㅇ"  # 승
SUPERSCRIPTS = str.maketrans("-+0123456789", "⁻⁺⁰¹²³⁴⁵⁶⁷⁸⁹")


def number_text(number) -> str:
    """The number as it is shown: text as given, an int or float in Python's plain form.

    None (a figure not measured) is shown as "—", as the report's filters show it.
    """
    if isinstance(number, bool):
        raise TypeError(f"{number!r} is a truth value, not a number to put a particle after.")
    if number is None:
        return "—"
    if isinstance(number, numbers.Integral):
        return str(int(number))
    if isinstance(number, numbers.Real):
        return repr(float(number))
    if isinstance(number, str):
        return number.strip()
    raise TypeError(f"{number!r} is not a number or the text of one.")


def written(value: float, digits: int = 3) -> str:
    """``value`` to ``digits`` significant digits as the report shows it: plain where Python's
    "g" format is plain ("0.001", "12.5"), else as Korean reads a power of ten: "9.54 × 10⁻⁷"
    (never "9.54e-07", which has no reading to choose a particle by)."""
    text = format(value, f".{digits}g")
    if "e" not in text:
        return text
    mantissa, exponent = text.split("e")
    power = str(int(exponent)).translate(SUPERSCRIPTS)
    return f"{mantissa} × 10{power}"


def significant(value: float, digits: int = 3) -> str:
    """``value`` to ``digits`` significant digits, plain, with thousands separators: 7.5637 is
    "7.56", 1183.2 is "1,180", 0.15631 is "0.156" (a measured median as every report prints
    it; :func:`written` where a power of ten may be needed)."""
    if value == 0 or not math.isfinite(value):
        return format(value, "g")
    place = math.floor(math.log10(abs(value))) - (digits - 1)
    shown = round(value, -place)
    if shown and math.floor(math.log10(abs(shown))) - (digits - 1) > place:
        place += 1  # 999.6 rounds to 1,000: one digit fewer behind the point
    return f"{shown:,.{max(0, -place)}f}"


def integer_final(digits: str) -> str | None:
    """The final consonant of an integer's Sino-Korean reading (digits only, no separators)."""
    stripped = digits.lstrip("0")
    if not stripped:
        return DIGIT_FINALS["0"]  # 영
    zeros = len(stripped) - len(stripped.rstrip("0"))
    if zeros == 0:
        return DIGIT_FINALS[stripped[-1]]
    if zeros < 4:
        return PLACE_FINALS[zeros]
    group = zeros // 4  # 100000 is 십만: the lowest non-zero group's unit ends the reading
    if group not in GROUP_FINALS:
        raise ValueError(f"{digits} is past the units mminfer reads (해, 10^20).")
    return GROUP_FINALS[group]


def syllable_final(syllable: str) -> str | None:
    """The final consonant of one Hangul syllable (None: it ends in a vowel)."""
    final = HANGUL_FINALS[(ord(syllable) - 0xAC00) % 28]
    if final == " ":
        return None
    return final


def reading_final(number) -> str | None:
    """How the reading of ``number`` (or of the text that shows it) ends: a final consonant or None.

    Raises ValueError for text whose reading mminfer cannot tell ("—", "nan", a word in Latin
    letters).
    """
    text = number_text(number)
    while PARENTHESIS_AT_END.search(text) and not PARENTHESIS_AT_END.fullmatch(text):
        text = PARENTHESIS_AT_END.sub("", text)
    if not text:
        raise ValueError("an empty text has no reading.")
    last = text[-1]
    if "가" <= last <= "힣":
        return syllable_final(last)
    if POWER_OF_TEN_AT_END.search(text):
        return POWER_FINAL
    unit = UNIT_AT_END.search(text)
    if unit is not None:
        return UNIT_FINALS[unit.group(1)]
    match = NUMBER_AT_END.search(text)
    if SCIENTIFIC.search(text):
        raise ValueError(f"{text!r} is in scientific notation; format it first.")
    if match is None:
        raise ValueError(f"{text!r} does not end in a number, a Hangul syllable or a known unit.")
    whole, fraction = match.groups()
    if fraction:
        return DIGIT_FINALS[fraction[-1]]
    return integer_final(whole.replace(",", ""))


def both_forms(pair: str) -> str:
    """The form written where the reading is unknown: 은(는), 이(가), (으)로, (이)다."""
    after_consonant, after_vowel = PAIRS[pair]
    if after_consonant[0] in "이으" and after_consonant[1:] == after_vowel:
        return f"({after_consonant[0]}){after_vowel}"
    return f"{after_consonant}({after_vowel})"


def particle_for(number, pair: str) -> str:
    """The form of particle ``pair`` ("은/는", ...) that follows ``number`` as it is read.

    Where the text has no reading ("—" for a figure not measured), both forms, as Korean writes
    them then: "—은(는)".
    """
    if pair not in PAIRS:
        raise ValueError(f"unknown particle pair {pair!r}; known: {', '.join(PAIRS)}.")
    after_consonant, after_vowel = PAIRS[pair]
    try:
        final = reading_final(number)
    except ValueError:
        return both_forms(pair)
    if final is None:
        return after_vowel
    if pair == "으로/로" and final == "ㄹ":
        return after_vowel
    return after_consonant


def particle(number, pair: str) -> str:
    """The number as shown, followed by its particle: particle(32, "은/는") is "32는"."""
    return number_text(number) + particle_for(number, pair)
