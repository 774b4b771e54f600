"""Agreement between the reviewers of a set of review files (one document each).

The ratings are the reviewers' current answers (adjudicators are not raters; stale
layers are left out): a category per answer (:func:`answer_category`: the value as
the panel's votes compare it, or ``absent`` / ``unreadable``), and its number where
the value is one, for the interval alpha. The statistics are
:func:`~docevals_mlflow.core.statistics.reviewer_agreement.reviewer_agreement`'s.
"""

from __future__ import annotations

import gc
from collections.abc import Hashable, Sequence
from typing import Any

from docevals_mlflow.core.statistics.reviewer_agreement import AgreementReport, reviewer_agreement
from docevals_mlflow.groundtruth.layer_view import ReviewLayers, rating_category
from docevals_mlflow.groundtruth.votes import vote_key


def review_agreement(
    layer_sets: Sequence[ReviewLayers],
    *,
    resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> AgreementReport:
    """Reviewer agreement per field path and overall over review files (documents),
    with bootstrap intervals resampling the documents (seeded)."""
    # Like load_many: every object made here lives until the end, so collecting
    # cycles while they are made (over a loaded folder's heap) is wasted time.
    paused = gc.isenabled()
    gc.disable()
    try:
        return _agreement(layer_sets, resamples, seed, confidence)
    finally:
        if paused:
            gc.enable()


def _agreement(
    layer_sets: Sequence[ReviewLayers], resamples: int, seed: int, confidence: float
) -> AgreementReport:
    documents: list[dict[str, dict[str, Hashable]]] = []
    numbers: list[dict[str, dict[str, float]]] = []
    # Many answers repeat a value (accepted proposals, "absent"): classify each once.
    seen: dict[tuple[type, Any], tuple[Hashable, float | None]] = {}
    for layers in layer_sets:
        rated: dict[str, dict[str, Hashable]] = {}
        numeric: dict[str, dict[str, float]] = {}
        for path, last in layers.current_entries():
            accepted: tuple[Hashable, float | None] | None = None
            categories: dict[str, Hashable] = {}
            for person, (entry, _, role) in last.items():
                if role != "reviewer":
                    continue
                action = entry.action
                if action == "accept":
                    # Every reviewer who accepts a path accepts the same value.
                    if accepted is None:
                        accepted = _classified(layers.targets.proposed(path), seen)
                    category, number = accepted
                elif action == "set":
                    category, number = _classified(entry.value, seen)
                else:
                    category, number = rating_category(action, None), None
                categories[person] = category
                if number is not None:
                    numeric.setdefault(path, {})[person] = number
            if categories:
                rated[path] = categories
        documents.append(rated)
        numbers.append(numeric)
    return reviewer_agreement(
        documents, numbers, resamples=resamples, seed=seed, confidence=confidence
    )


def _classified(
    value: Any, seen: dict[tuple[type, Any], tuple[Hashable, float | None]]
) -> tuple[Hashable, float | None]:
    """The category and number of a value an answer gives (``accept`` or ``set``)."""
    cacheable = value is None or isinstance(value, (str, int, float, bool))
    if cacheable:
        found = seen.get((type(value), value))
        if found is not None:
            return found
    # vote_key's key of a number is number_key's ("number", "12.5"): one call gives
    # both the category and the number.
    key = vote_key(value)
    number = float(key[1]) if type(key) is tuple and key[0] == "number" else None
    found = (("value", key), number)
    if cacheable:
        seen[type(value), value] = found
    return found
