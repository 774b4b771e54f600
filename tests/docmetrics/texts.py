"""Seeded generated texts for the text-metric tests: many scripts, accents (precomposed
and combining), CJK, emoji (with joiners and skin tones), odd white space, empty texts
and long ones; predictions are the texts with OCR-like damage."""

from __future__ import annotations

import random

ALPHABETS = (
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,;:!?-()'\"",
    "àáâãäåçèéêëìíîïñòóôõöùúûüýÿßøæœÀÉÎÕÜ",
    "e\u0301a\u0300o\u0308n\u0303",  # combining accents: NFC composes them
    "αβγδεζηθικλμνξοπρστυφχψωΑΒΓΔ",
    "абвгдеёжзийклмнопрстуфхцчшщъыьэюяЖЩ",
    "ابتثجحخدذرزسشصضطظعغفقكلمنهوي",
    "אבגדהוזחטיכלמנסעפצקרשת",
    "अआइईउऊएऐओऔकखगघचछजझटठडढणतथदधनपफबभमयरलवशषसह्ािी",
    "กขคฆงจฉชซญฎฏฐฑฒณดตถทธนบปผฝพฟภมยรลวศษสหฬอฮะาิี",
    "東京都大阪府日本語文字認識請求書合計金額円年月日",
    "ひらがなカタカナ한국어텍스트",
    "😀😃🇫🇷👍🏽👨\u200d👩\u200d👧€$£¥",
    "ＡＢＣ１２３ﬁﬂ",  # compatibility forms: NFKC folds them
)
SPACES = (" ", " ", " ", " ", "  ", "\t", "\n", "\u00a0", "\u3000")


def random_text(rng: random.Random, length: int) -> str:
    """A text of about ``length`` characters in one to three scripts."""
    scripts = rng.sample(ALPHABETS, rng.randint(1, 3))
    out: list[str] = []
    while len(out) < length:
        word = "".join(rng.choice(rng.choice(scripts)) for _ in range(rng.randint(1, 9)))
        out.extend(word)
        out.append(rng.choice(SPACES))
    return "".join(out[:length])


def damaged(rng: random.Random, text: str, rate: float) -> str:
    """``text`` with about ``rate`` of its characters substituted, dropped or doubled."""
    chars = list(text)
    pool = rng.choice(ALPHABETS)
    for _ in range(int(len(chars) * rate)):
        if not chars:
            break
        at = rng.randrange(len(chars))
        kind = rng.random()
        if kind < 0.5:
            chars[at] = rng.choice(pool)
        elif kind < 0.75:
            del chars[at]
        else:
            chars.insert(at, rng.choice(pool + " "))
    return "".join(chars)


def pairs(seed: int, count: int) -> list[tuple[str, str]]:
    """Expected/predicted pairs: short, long, empty on either side, identical, unrelated."""
    rng = random.Random(seed)
    out = [("", ""), ("", "abc"), ("Straße 東京", ""), (" ", "\t\n")]
    for _ in range(count):
        length = rng.choice((1, 5, 40, 300, 3000))
        text = random_text(rng, length)
        roll = rng.random()
        if roll < 0.1:
            out.append((text, text))
        elif roll < 0.2:
            out.append((text, random_text(rng, rng.choice((0, 3, length)))))
        else:
            out.append((text, damaged(rng, text, rng.choice((0.01, 0.1, 0.5)))))
    return out
