"""Deterministic synthetic Korean corpus for the embedded MiniMind demo.

The corpus is built so that a very small model (a few million parameters,
about a minute of CPU training) can learn two contrasting kinds of
next-token distribution that the sampling measurements rely on:

* **open**: sentences that start with a person's name (``민수는 ...``) continue
  with many different words (times, places, people, objects, feelings);
* **sharp**: ``{마을}의 특산물은`` is always followed by that village's one
  specialty, stated in exactly one way (``가람 마을의 특산물은 유자차이다.``).

Everything comes from :class:`random.Random` streams derived from the seed,
so the same :class:`CorpusSpec` always gives byte-identical files.  The
village facts themselves are fixed tables and do not depend on the seed.

All sentences are written from small templates with slot fillers; the
Korean particles (은/는, 이/가, 을/를, 과/와, 으로/로) are chosen from the
final consonant of the word they attach to.
"""

from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass, field
from pathlib import Path

from mminfer.io import write_text_atomic

GARAM_VILLAGE = "가람 마을"
GARAM_QUESTION = "가람 마을의 특산물은 무엇인가요?"

# Village -> (specialty, where the village lies).  Fixed facts: every
# sentence about a village's specialty states exactly this one.  Specialty
# words are chosen so that none is a substring of another or of any filler
# word below, which keeps the facts checkable by plain substring search.
VILLAGES: dict[str, tuple[str, str]] = {
    "가람 마을": ("유자차", "강가"),
    "나래 마을": ("인삼", "산골짜기"),
    "다솜 마을": ("곶감", "언덕 위"),
    "라온 마을": ("옥수수", "넓은 들판"),
    "마루 마을": ("고구마", "산 아래"),
    "보람 마을": ("녹차", "호숫가"),
    "새봄 마을": ("딸기", "작은 섬"),
    "아라 마을": ("미역", "바닷가"),
    "여울 마을": ("송어", "냇가"),
    "자올 마을": ("도토리묵", "깊은 숲속"),
    "초롱 마을": ("복숭아", "햇볕 좋은 골짜기"),
    "타래 마을": ("호두과자", "기찻길 옆"),
    "파란 마을": ("대추", "고개 너머"),
    "하늘 마을": ("포도", "높은 산 위"),
    "한별 마을": ("참외", "큰 강 건너편"),
    "누리 마을": ("표고버섯", "소나무 숲 옆"),
    "도담 마을": ("한과", "오래된 성 근처"),
    "미르 마을": ("벌꿀", "꽃밭 사이"),
    "소담 마을": ("수박", "모래밭 옆"),
    "온새 마을": ("전복", "바위 해안"),
}

PEOPLE = [
    "민수",
    "지우",
    "서연",
    "하준",
    "수아",
    "도윤",
    "예린",
    "준호",
    "나은",
    "현우",
    "소미",
    "태민",
    "유나",
    "건우",
    "다인",
    "재희",
]

TIMES = [
    "아침에",
    "점심에",
    "저녁에",
    "밤늦게",
    "새벽에",
    "어제",
    "오늘",
    "주말에",
    "월요일에",
    "토요일에",
    "방과 후에",
    "봄에",
    "여름에",
    "가을에",
    "겨울에",
    "지난주에",
    "쉬는 날에",
]

PLACES = [
    "시장",
    "공원",
    "도서관",
    "학교",
    "집",
    "가게",
    "식당",
    "카페",
    "바닷가",
    "강가",
    "산",
    "기차역",
    "병원",
    "우체국",
    "운동장",
    "놀이터",
    "빵집",
    "서점",
    "극장",
    "할머니 댁",
]

FOODS = [
    "비빔밥",
    "김밥",
    "라면",
    "떡볶이",
    "만두",
    "냉면",
    "볶음밥",
    "떡국",
    "된장찌개",
    "빵",
    "국수",
    "호박죽",
    "주먹밥",
    "샌드위치",
]
DRINKS = ["우유", "물", "커피", "주스", "보리차", "식혜", "코코아"]
BOOKS = ["동화책", "소설", "신문", "만화책", "시집", "잡지", "편지", "요리책"]
ITEMS = [
    "공책",
    "연필",
    "우산",
    "모자",
    "신발",
    "가방",
    "꽃",
    "장갑",
    "시계",
    "양말",
    "지도",
    "사진첩",
    "수건",
    "공",
]

# Whole predicates in plain past tense ("-었다"); the polite form used in
# SFT answers is derived by :func:`polite`.
ACTIVITIES = [
    "산책을 했다",
    "노래를 불렀다",
    "그림을 그렸다",
    "숙제를 했다",
    "청소를 했다",
    "축구를 했다",
    "낮잠을 잤다",
    "일기를 썼다",
    "요리를 했다",
    "피아노를 쳤다",
    "자전거를 탔다",
    "음악을 들었다",
    "편지를 썼다",
    "춤을 추었다",
    "빨래를 했다",
    "사진을 찍었다",
]
FEELINGS = [
    "기분이 좋았다",
    "조금 피곤했다",
    "배가 고팠다",
    "아주 행복했다",
    "마음이 편했다",
    "졸렸다",
    "신이 났다",
    "조금 심심했다",
]
MANNERS = [
    "천천히 걸었다",
    "빨리 달렸다",
    "크게 웃었다",
    "조용히 앉아 있었다",
    "오래 기다렸다",
    "열심히 공부했다",
]


# ---------------------------------------------------------------------------
# Korean particles
# ---------------------------------------------------------------------------


def _final_consonant(word: str) -> int:
    """Index of the final consonant (batchim) of the word's last syllable.

    0 means no final consonant; 8 is ㄹ.  Non-Hangul endings count as none.
    """
    last = word[-1]
    code = ord(last) - 0xAC00
    if 0 <= code < 11172:
        return code % 28
    return 0


def _has_batchim(word: str) -> bool:
    return _final_consonant(word) != 0


def topic(word: str) -> str:
    """Word with the topic particle: 민수는, 서연은."""
    return word + ("은" if _has_batchim(word) else "는")


def subject(word: str) -> str:
    """Word with the subject particle: 유자차가, 인삼이."""
    return word + ("이" if _has_batchim(word) else "가")


def obj(word: str) -> str:
    """Word with the object particle: 빵을, 우유를."""
    return word + ("을" if _has_batchim(word) else "를")


def with_(word: str) -> str:
    """Word with the comitative particle: 민수와, 서연과."""
    return word + ("과" if _has_batchim(word) else "와")


def by(word: str) -> str:
    """Word with the instrumental particle: 유자차로, 인삼으로, 벌꿀로."""
    final = _final_consonant(word)
    if final == 0 or final == 8:
        return word + "로"
    return word + "으로"


def copula_plain(word: str) -> str:
    """Plain declarative copula: 유자차이다, 인삼이다."""
    return word + "이다"


def copula_polite(word: str) -> str:
    """Polite copula: 유자차예요, 인삼이에요."""
    return word + ("이에요" if _has_batchim(word) else "예요")


def polite(predicate: str) -> str:
    """Turn a plain past predicate ("먹었다") into the polite one ("먹었어요")."""
    if predicate.endswith("다"):
        return predicate[:-1] + "어요"
    return predicate


# ---------------------------------------------------------------------------
# Public data model
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class CorpusSpec:
    """Sizes and seed of the demo corpus: config key demo_model.corpus (defaults in the schema)."""

    seed: int
    train_docs: int
    val_docs: int
    sft_conversations: int


@dataclass
class Corpus:
    """Generated corpus: pretrain documents, SFT chats and the village facts."""

    train: list[str] = field(default_factory=list)
    val: list[str] = field(default_factory=list)
    sft: list[list[dict]] = field(default_factory=list)
    facts: dict[str, str] = field(default_factory=dict)


def village_facts() -> dict[str, str]:
    """Village -> specialty, in a fixed order."""
    facts: dict[str, str] = {}
    for village, (specialty, _location) in VILLAGES.items():
        facts[village] = specialty
    return facts


def garam_specialty() -> str:
    """The one specialty of 가람 마을 (what answers to GARAM_QUESTION contain)."""
    return VILLAGES[GARAM_VILLAGE][0]


def _rng(seed: int, stream: str) -> random.Random:
    """Independent, reproducible random stream for one part of the corpus.

    String seeds are hashed with SHA-512 by :mod:`random`, so this does not
    depend on PYTHONHASHSEED.
    """
    return random.Random(f"mminfer-demo:{seed}:{stream}")


# ---------------------------------------------------------------------------
# Pretrain sentences
# ---------------------------------------------------------------------------


def _other_person(rng: random.Random, person: str) -> str:
    while True:
        other = rng.choice(PEOPLE)
        if other != person:
            return other


def _everyday_predicate(rng: random.Random, person: str) -> str:
    """The part of an everyday sentence after the subject, in plain past tense.

    The first word varies a lot (time, place, object, person, feeling,
    manner, village), which is what makes ``민수는`` an open context.
    """
    kind = rng.randrange(16)
    time = rng.choice(TIMES)
    place = rng.choice(PLACES)
    other = _other_person(rng, person)
    if kind == 0:
        return f"{time} {place}에서 {obj(rng.choice(FOODS))} 먹었다"
    if kind == 1:
        return f"{place}에서 {obj(rng.choice(DRINKS))} 마셨다"
    if kind == 2:
        return f"{time} {place}에 갔다"
    if kind == 3:
        return f"{place}에서 {obj(rng.choice(BOOKS))} 읽었다"
    if kind == 4:
        return f"{time} {obj(other)} 만났다"
    if kind == 5:
        return f"{with_(other)} 함께 {place}에 갔다"
    if kind == 6:
        return f"{place}에서 {obj(rng.choice(ITEMS))} 샀다"
    if kind == 7:
        return f"{time} {rng.choice(ACTIVITIES)}"
    if kind == 8:
        return f"{other}에게 {obj(rng.choice(ITEMS))} 주었다"
    if kind == 9:
        return f"{time} {rng.choice(FEELINGS)}"
    if kind == 10:
        village = rng.choice(list(VILLAGES))
        return f"{time} {village}에 놀러 갔다"
    if kind == 11:
        return f"{obj(rng.choice(FOODS))} 좋아해서 자주 먹었다"
    if kind == 12:
        return f"{place}에서 {rng.choice(MANNERS)}"
    if kind == 13:
        return f"{obj(rng.choice(BOOKS))} {time} 다 읽었다"
    if kind == 14:
        return f"{obj(rng.choice(ITEMS))} {place}에서 잃어버렸다"
    return f"{place}에서 {with_(other)} 이야기를 나누었다"


def _everyday_sentence(rng: random.Random, person: str) -> str:
    return f"{topic(person)} {_everyday_predicate(rng, person)}."


def canonical_fact(village: str) -> str:
    """The one fixed way the pretrain text states a village's specialty."""
    specialty = VILLAGES[village][0]
    return f"{village}의 특산물은 {copula_plain(specialty)}."


def _extra_fact(rng: random.Random, village: str) -> str:
    """Another phrasing of the same fact; never starts with ``{village}의 특산물은``."""
    specialty, _location = VILLAGES[village]
    kind = rng.randrange(6)
    if kind == 0:
        return f"{topic(village)} {by(specialty)} 유명하다."
    if kind == 1:
        return f"{topic(specialty)} {village}의 자랑이다."
    if kind == 2:
        return f"{village} 사람들은 {obj(specialty)} 장터에 내다 판다."
    if kind == 3:
        person = rng.choice(PEOPLE)
        return f"{topic(person)} {village}에 가서 {obj(specialty)} 샀다."
    if kind == 4:
        return f"사람들은 {obj(specialty)} 사러 {village}에 간다."
    return f"{village}에서 나는 {topic(specialty)} 맛이 좋기로 이름났다."


def _village_intro(village: str) -> str:
    location = VILLAGES[village][1]
    return f"{topic(village)} {location}에 있는 마을이다."


def _village_document(rng: random.Random) -> str:
    """A short text about one village: location, the canonical fact, more.

    Half of them open with the canonical fact, so that "[bos]가람 마을의 특산물은" (no space
    before the village: another token than " 가람") is seen at a document's start and has one
    continuation.
    """
    village = rng.choice(list(VILLAGES))
    facts = [canonical_fact(village)]
    for _ in range(rng.randint(1, 2)):
        facts.append(_extra_fact(rng, village))
    rng.shuffle(facts)
    sentences = [_village_intro(village)] + facts
    if rng.random() < 0.5:
        sentences.remove(canonical_fact(village))
        sentences.insert(0, canonical_fact(village))
    person = rng.choice(PEOPLE)
    for _ in range(rng.randint(3, 6)):
        sentences.append(_everyday_sentence(rng, person))
    return " ".join(sentences)


def _person_document(rng: random.Random) -> str:
    """Six to eleven everyday sentences, now and then switching person.

    Documents are this long so that the first six validation documents
    always give well over 200 tokens (the greedy-continuation prompt).
    """
    person = rng.choice(PEOPLE)
    count = rng.randint(6, 11)
    sentences = []
    for _ in range(count):
        if rng.random() < 0.2:
            person = rng.choice(PEOPLE)
        sentences.append(_everyday_sentence(rng, person))
    if rng.random() < 0.25:
        village = rng.choice(list(VILLAGES))
        position = rng.randrange(len(sentences) + 1)
        sentences.insert(position, canonical_fact(village))
    return " ".join(sentences)


def _document(rng: random.Random) -> str:
    if rng.random() < 0.35:
        return _village_document(rng)
    return _person_document(rng)


def _documents(rng: random.Random, count: int) -> list[str]:
    documents = []
    for _ in range(count):
        documents.append(_document(rng))
    return documents


# ---------------------------------------------------------------------------
# SFT conversations
# ---------------------------------------------------------------------------

SPECIALTY_QUESTIONS = [
    "{v}의 특산물은 무엇인가요?",
    "{v}에서는 무엇이 유명해요?",
    "{v} 특산물 알려 주세요.",
    "{v}에 가면 무엇을 사야 하나요?",
    "{v}의 자랑은 무엇인가요?",
    "{v}에서 나는 특산물이 뭐예요?",
]

ANSWER_TAILS = [
    "",
    " 맛이 아주 좋아요.",
    " 선물로도 좋아요.",
    " 많은 사람이 찾아와요.",
    " 꼭 한번 맛보세요.",
]


def _specialty_answer(rng: random.Random, village: str) -> str:
    """A short answer that always names the village's specialty."""
    specialty = VILLAGES[village][0]
    heads = (
        f"{village}의 특산물은 {specialty}입니다.",
        f"{copula_polite(specialty)}. {topic(village)} {by(specialty)} 유명합니다.",
        f"{specialty}입니다.",
        f"{village}에서는 {subject(specialty)} 유명해요.",
        f"{obj(specialty)} 꼭 사 보세요. {village}의 자랑이에요.",
        f"{village} 하면 {specialty}{'이지요' if _has_batchim(specialty) else '지요'}.",
        f"{village}의 특산물은 {copula_polite(specialty)}.",
        f"{topic(village)} {by(specialty)} 이름난 마을이에요.",
    )
    head = heads[rng.randrange(len(heads))]
    return head + rng.choice(ANSWER_TAILS)


def _turns(question: str, answer: str) -> list[dict]:
    return [
        {"role": "user", "content": question},
        {"role": "assistant", "content": answer},
    ]


def _specialty_conversation(rng: random.Random, village: str, phrasing: int) -> list[dict]:
    question = SPECIALTY_QUESTIONS[phrasing].format(v=village)
    return _turns(question, _specialty_answer(rng, village))


def _everyday_conversation(rng: random.Random) -> list[dict]:
    """Small talk about people, food, books and places, to keep SFT general."""
    person = rng.choice(PEOPLE)
    kind = rng.randrange(8)
    if kind == 0:
        time = rng.choice(TIMES)
        question = f"{topic(person)} {time} 무엇을 했나요?"
        answer = f"{topic(person)} {time} {polite(rng.choice(ACTIVITIES))}."
    elif kind == 1:
        question = f"{topic(person)} 어디에 갔나요?"
        answer = f"{topic(person)} {rng.choice(PLACES)}에 갔어요."
    elif kind == 2:
        question = "오늘 무엇을 먹을까요?"
        food = rng.choice(FOODS)
        if rng.random() < 0.5:
            answer = f"{obj(food)} 먹어 보세요."
        else:
            answer = f"{subject(food)} 좋겠어요."
    elif kind == 3:
        question = "읽을 책을 추천해 주세요."
        answer = f"{obj(rng.choice(BOOKS))} 읽어 보세요."
    elif kind == 4:
        question = "주말에 무엇을 하면 좋을까요?"
        answer = f"{rng.choice(PLACES)}에 가 보세요."
    elif kind == 5:
        question = "안녕하세요."
        answer = rng.choice(
            [
                "안녕하세요. 무엇을 도와드릴까요?",
                "반가워요. 궁금한 것을 물어보세요.",
            ]
        )
    elif kind == 6:
        other = _other_person(rng, person)
        question = f"{topic(person)} 누구를 만났나요?"
        answer = f"{topic(person)} {obj(other)} 만났어요."
    else:
        village = rng.choice(list(VILLAGES))
        location = VILLAGES[village][1]
        question = f"{topic(village)} 어디에 있나요?"
        answer = f"{topic(village)} {location}에 있어요."
    return _turns(question, answer)


def _sft_conversations(rng: random.Random, count: int) -> list[list[dict]]:
    """Specialty Q&A (about 60%) and small talk, shuffled.

    Every village's first question phrasing (``{마을}의 특산물은 무엇인가요?``)
    is included at least once, so GARAM_QUESTION is always present.
    """
    conversations = []
    for village in VILLAGES:
        conversations.append(_specialty_conversation(rng, village, 0))
    while len(conversations) < count:
        if rng.random() < 0.6:
            village = rng.choice(list(VILLAGES))
            if rng.random() < 0.4:
                phrasing = 0
            else:
                phrasing = rng.randrange(len(SPECIALTY_QUESTIONS))
            conversations.append(_specialty_conversation(rng, village, phrasing))
        else:
            conversations.append(_everyday_conversation(rng))
    rng.shuffle(conversations)
    return conversations[:count]


# ---------------------------------------------------------------------------
# Build and write
# ---------------------------------------------------------------------------


def build_corpus(spec: CorpusSpec) -> Corpus:
    """Generate the whole corpus; train, val and SFT use separate streams."""
    return Corpus(
        train=_documents(_rng(spec.seed, "train"), spec.train_docs),
        val=_documents(_rng(spec.seed, "val"), spec.val_docs),
        sft=_sft_conversations(_rng(spec.seed, "sft"), spec.sft_conversations),
        facts=village_facts(),
    )


def training_texts(documents: list[str], conversations: list[list[dict]]) -> list[str]:
    """Pretrain documents plus every SFT turn's role and content."""
    texts = list(documents)
    for conversation in conversations:
        for message in conversation:
            texts.append(message["role"])
            texts.append(message["content"])
    return texts


def tokenizer_training_texts(corpus: Corpus) -> list[str]:
    """Texts to train the tokenizer on: pretrain documents and SFT turns.

    Including the SFT turns gives question and polite-answer words
    (``무엇인가요``, ``입니다``) and the role names of the chat template
    (``user``, ``assistant``) their own tokens instead of raw bytes.
    """
    return training_texts(corpus.train, corpus.sft)


def _jsonl(records: list[dict]) -> str:
    lines = []
    for record in records:
        lines.append(json.dumps(record, ensure_ascii=False) + "\n")
    return "".join(lines)


def write_corpus(corpus: Corpus, out_dir: str | os.PathLike) -> dict[str, Path]:
    """Write the corpus in MiniMind's file formats; return name -> path.

    ``pretrain_train.jsonl`` / ``pretrain_val.jsonl``: one ``{"text": ...}``
    per line; ``sft.jsonl``: one ``{"conversations": [...]}`` per line;
    ``facts.json``: village -> specialty.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    contents = {
        "pretrain_train.jsonl": _jsonl([{"text": doc} for doc in corpus.train]),
        "pretrain_val.jsonl": _jsonl([{"text": doc} for doc in corpus.val]),
        "sft.jsonl": _jsonl([{"conversations": conv} for conv in corpus.sft]),
        "facts.json": json.dumps(corpus.facts, ensure_ascii=False, indent=2) + "\n",
    }
    paths: dict[str, Path] = {}
    for name, text in contents.items():
        path = out / name
        write_text_atomic(path, text)
        paths[name] = path
    return paths
