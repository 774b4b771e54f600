"""JACCARD: the share of word tokens two values have in common, a docevals field method.

Registered through the entry point group ``docevals.field_methods`` (see this
example's ``pyproject.toml``); docevals loads it the first time a schema names a
method that is not built in.
"""

from __future__ import annotations

import re
from typing import Any

from docevals_mlflow import FieldMethod, FieldSpec, MethodOption, SimpleComparator

_WORD = re.compile(r"\w+")


class JaccardComparator(SimpleComparator):
    """Words both values hold over words either holds (sets of word tokens)."""

    def __init__(self, *, threshold: float, lowercase: bool, min_length: int) -> None:
        super().__init__("JACCARD", threshold)
        self.lowercase = lowercase
        self.min_length = min_length
        if not lowercase:
            self.label = f"JACCARD (case-sensitive, threshold: {threshold:g})"

    def prepare(self, value: Any) -> frozenset[str]:
        text = value if isinstance(value, str) else str(value)
        if self.lowercase:
            text = text.casefold()
        return frozenset(word for word in _WORD.findall(text) if len(word) >= self.min_length)

    def score(self, expected: frozenset[str], predicted: frozenset[str]) -> float:
        if not expected and not predicted:
            return 1.0  # no words on either side: nothing tells them apart
        return len(expected & predicted) / len(expected | predicted)

    def config(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "threshold": self.threshold,
            "lowercase": self.lowercase,
            "min_length": self.min_length,
        }


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError("must be true or false")
    return value


def _length(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError("must be a whole number of at least 1")
    return value


def _jaccard(spec: FieldSpec) -> JaccardComparator:
    return JaccardComparator(
        threshold=spec.effective_threshold,
        lowercase=spec.option("lowercase"),
        min_length=spec.option("min_length"),
    )


JACCARD = FieldMethod(
    name="JACCARD",
    default_threshold=0.5,
    factory=_jaccard,
    options=(
        MethodOption("lowercase", validate=_flag, default=True),
        MethodOption("min_length", validate=_length, default=1),
    ),
    # Identical texts have identical token sets, which score 1.
    identical_text_matches=True,
    stickler_names=("JaccardComparator", "jaccard"),
    explanation="the share of word tokens the two values have in common "
    "(|A ∩ B| / |A ∪ B|); a match when it reaches the threshold.",
)
