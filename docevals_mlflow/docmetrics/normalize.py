"""The one documented text normalization every text metric applies before comparing.

Steps, in this order (each optional): Unicode normalization (NFC by default, NFKC to
fold compatibility forms such as full-width letters and ligatures), removal of
punctuation (every character of a Unicode ``P*`` category), case folding
(``str.casefold``, so ``ß`` and ``ss`` compare equal), and white-space collapse (runs
of any Unicode white space become one space, leading and trailing space is dropped).
Punctuation goes before the white-space collapse so that ``"a , b"`` becomes
``"a b"``, not ``"a  b"``.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

from docevals_mlflow.errors import InputError

UnicodeForm = Literal["NFC", "NFKC", "none"]


@dataclass(frozen=True)
class TextNormalization:
    """How texts are normalized before a text metric compares them."""

    unicode_form: UnicodeForm = "NFC"
    """``NFC`` (composed accents), ``NFKC`` (also compatibility forms) or ``none``."""
    collapse_whitespace: bool = True
    """Runs of white space become one space; leading and trailing space is dropped."""
    casefold: bool = False
    """Compare without case (``str.casefold``)."""
    remove_punctuation: bool = False
    """Drop every character of a Unicode punctuation category (``Pc Pd Pe Pf Pi Po Ps``)."""

    def __post_init__(self) -> None:
        if self.unicode_form not in ("NFC", "NFKC", "none"):
            raise InputError(
                f"unicode_form {self.unicode_form!r} is not one of 'NFC', 'NFKC', 'none'"
            )

    def apply(self, text: str) -> str:
        """``text`` normalized as the options say."""
        text = self._before_whitespace(text)
        if self.collapse_whitespace:
            text = " ".join(text.split())
        return text

    def apply_with_words(self, text: str) -> tuple[str, list[str]]:
        """``text`` normalized, and its white-space separated words (split once: the
        words of a collapsed text are the words it was joined from)."""
        text = self._before_whitespace(text)
        words = text.split()
        return (" ".join(words) if self.collapse_whitespace else text), words

    def _before_whitespace(self, text: str) -> str:
        if self.unicode_form != "none" and not text.isascii():
            text = unicodedata.normalize(self.unicode_form, text)
        if self.remove_punctuation:
            text = text.translate(_punctuation_table(text))
        if self.casefold:
            text = text.casefold()
        return text


RAW = TextNormalization(unicode_form="none", collapse_whitespace=False)
"""No normalization at all: texts are compared code point by code point."""

DEFAULT = TextNormalization()
"""NFC and white-space collapse; case and punctuation count."""


def _punctuation_table(text: str) -> dict[int, None]:
    # Only the characters that occur: a table of all of Unicode's punctuation would
    # cost more to build than the texts of a page cost to scan.
    return {ord(char): None for char in set(text) if unicodedata.category(char).startswith("P")}


def check_text(value: object, where: str) -> str:
    """``value`` when it is a ``str``; otherwise a clear error naming ``where``.

    Bytes are refused rather than decoded: a page read with the wrong encoding would
    score silently wrong. A lone surrogate (what ``errors="surrogateescape"`` leaves
    of undecodable bytes) is refused with its position.
    """
    if isinstance(value, str):
        if not value.isascii():
            _check_no_surrogates(value, where)
        return value
    if isinstance(value, (bytes, bytearray)):
        raise InputError(
            f"{where}: expected text (str), got bytes; decode it first (e.g. as UTF-8)"
        )
    raise InputError(f"{where}: expected text (str), got {type(value).__name__}")


# Lone surrogates are what ``errors="surrogateescape"`` leaves of undecodable bytes; a
# search for them costs a third of encoding the text to find them.
_SURROGATE = re.compile("[\ud800-\udfff]")


def _check_no_surrogates(text: str, where: str) -> None:
    found = _SURROGATE.search(text)
    if found is not None:
        raise InputError(
            f"{where}: character {found.start()} is an undecodable byte "
            f"({found.group()!r}); the text mixes encodings, decode it as one"
        )
