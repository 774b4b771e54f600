"""Driving document walks: one at a time, or many with batched list pairing."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from docevals_mlflow.core.gc import gc_paused
from docevals_mlflow.errors import InputError
from docevals_mlflow.fields.pairing import batch_item_similarity, item_similarity
from docevals_mlflow.fields.state import SimilarityRequest, SimilarityResult, Walk


def too_deep() -> InputError:
    """The error for a document nested deeper than the comparison can follow."""
    return InputError(
        "the document is nested too deeply to compare (Python's recursion limit, "
        f"{sys.getrecursionlimit()} frames, was reached)",
        expected="objects and lists nested at most a few hundred levels",
    )


def run_walk(walk: Walk) -> None:
    """Drive one document's walk, computing each list's similarity on request."""
    with gc_paused():
        try:
            request = next(walk)
            while True:
                request = walk.send(item_similarity(*request))
        except StopIteration:
            return
        except RecursionError:
            raise too_deep() from None


def run_walks(walks: Sequence[Walk]) -> None:
    """Drive many documents' walks together.

    Whenever every walk is waiting on a list, the requests for the same list node are
    answered by one vectorised computation over all their item pairs
    (:func:`batch_item_similarity`), which is what makes small documents fast.
    """
    active: list[tuple[Walk, SimilarityRequest]] = []
    for walk in walks:
        request = _advance(walk, None)
        if request is not None:
            active.append((walk, request))
    while active:
        groups: dict[int, list[tuple[Walk, SimilarityRequest]]] = {}
        for entry in active:
            groups.setdefault(id(entry[1][0]), []).append(entry)
        active = []
        for group in groups.values():
            results = batch_item_similarity([request for _, request in group])
            for (walk, _), result in zip(group, results, strict=True):
                request = _advance(walk, result)
                if request is not None:
                    active.append((walk, request))


def _advance(walk: Walk, value: SimilarityResult | None) -> SimilarityRequest | None:
    try:
        return next(walk) if value is None else walk.send(value)
    except StopIteration:
        return None
    except RecursionError:
        raise too_deep() from None
