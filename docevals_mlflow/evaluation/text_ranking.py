"""Values as text and a cheap text ranking of list items: what the SEMANTIC and LLM
field methods share (a provider call is never needed to pair list items)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from rapidfuzz import fuzz, process

from docevals_mlflow.core.fingerprints import canonical_json
from docevals_mlflow.fields.comparator import Matrix


def field_text(value: Any) -> str:
    """A value as the text a provider compares (whitespace collapsed, JSON for data)."""
    if isinstance(value, str):
        return " ".join(value.split())
    if isinstance(value, (dict, list)):
        return canonical_json(value)
    return str(value)


def text_ranking_matrix(expected: Sequence[Any], predicted: Sequence[Any]) -> Matrix:
    """Token-set similarity of every (expected, predicted) text: a ranking of list
    items for pairing that needs no provider call."""
    if not expected or not predicted:
        return np.zeros((len(expected), len(predicted)), dtype=np.float64)
    scores: Matrix = process.cdist(
        list(expected), list(predicted), scorer=fuzz.token_set_ratio, dtype=np.float64
    )
    return scores / 100.0


def text_ranking_pairwise(
    expected: Sequence[Any], predicted: Sequence[Any], left: Any, right: Any
) -> Any:
    """:func:`text_ranking_matrix` for the pairs ``(expected[left[i]], predicted[right[i]])``."""
    a = [expected[index] for index in np.asarray(left).tolist()]
    b = [predicted[index] for index in np.asarray(right).tolist()]
    return process.cpdist(a, b, scorer=fuzz.token_set_ratio, dtype=np.float64) / 100.0


def clip_score(value: float) -> float:
    """``value`` kept within 0..1."""
    return min(1.0, max(0.0, value))
