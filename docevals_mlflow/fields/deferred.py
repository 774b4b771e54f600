"""Comparisons that wait for a provider (SEMANTIC, LLM), decided in batches.

While a document is walked, comparisons whose score comes from a provider are only
queued (:class:`~docevals_mlflow.fields.state.DocumentState.deferred`). Once a chunk
of documents has been walked, :func:`resolve_deferred` asks each provider once per
document for all of that document's pairs, and emits the rows.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any, Protocol

from docevals_mlflow.fields.state import Deferred, DocumentState


class DeferredBatch(Protocol):
    """Decides the deferred comparisons of every comparator that shares it: one
    provider with one configuration (say, every LLM field built by one
    ``field_providers`` call), so that a document costs one request, not one per
    field.

    A deferred comparator names its batch in its ``batch`` attribute; batches that
    compare equal are asked together. An optional ``prefetch(keys)`` receives every
    prepared key of the chunk first (one embeddings request for all of them).
    """

    def score_many(self, pairs: Sequence[tuple[Any, Any, Any]]) -> Sequence[float | BaseException]:
        """For each ``(comparator, expected key, predicted key)``, its score, or the
        error that left that pair undecided. Raising leaves every pair undecided."""
        ...


class _OwnBatch:
    """The batch of a deferred comparator that names none: its own ``prefetch`` and
    ``score_pairs``, as before batches were shared."""

    __slots__ = ("comparator",)

    def __init__(self, comparator: Any) -> None:
        self.comparator = comparator

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _OwnBatch) and other.comparator is self.comparator

    def __hash__(self) -> int:
        return id(self.comparator)

    def prefetch(self, keys: Sequence[Any]) -> None:
        prefetch = getattr(self.comparator, "prefetch", None)
        if prefetch is not None:
            prefetch(keys)

    def score_many(self, pairs: Sequence[tuple[Any, Any, Any]]) -> Sequence[float | BaseException]:
        return list(self.comparator.score_pairs([(left, right) for _, left, right in pairs]))


def _batch_of(comparator: Any) -> DeferredBatch:
    batch = getattr(comparator, "batch", None)
    return batch if batch is not None else _OwnBatch(comparator)


def resolve_deferred(states: Sequence[DocumentState]) -> None:
    """Decide the comparisons that wait for a provider (SEMANTIC, LLM).

    Comparisons are grouped by the comparators' shared :class:`DeferredBatch` (one
    provider and configuration), not by field. Every key of every document is offered
    to the batch's ``prefetch`` first (one batch of embeddings for the whole chunk),
    then each document's pairs of all its fields go to ``score_many`` together: one
    request per document and provider, never one per field or per pair. A failed
    request leaves its pairs undecided, and so does a pair the provider did not
    answer: counted as FD (the worst case: no metric can look better than it is),
    with the reason in the row, and counted per template in ``state.undecided`` so
    that reports say how many comparisons were not decided.

    Rows are emitted in each document's own order, whatever else the chunk holds, so
    that comparing documents together or one by one gives the same rows.
    """
    outcomes: list[tuple[DocumentState, list[Deferred], list[float | BaseException]]] = []
    groups: dict[Any, list[tuple[list[Deferred], list[int], list[float | BaseException]]]] = {}
    for state in states:
        deferred, state.deferred = state.deferred, []
        if not deferred:
            continue
        scores: list[float | BaseException] = [_NOT_ASKED] * len(deferred)
        outcomes.append((state, deferred, scores))
        by_batch: dict[Any, tuple[list[Deferred], list[int]]] = {}
        for index, item in enumerate(deferred):
            items, indices = by_batch.setdefault(_batch_of(item[0].comparator), ([], []))
            items.append(item)
            indices.append(index)
        for batch, (items, indices) in by_batch.items():
            groups.setdefault(batch, []).append((items, indices, scores))
    for batch, entries in groups.items():
        prefetch = getattr(batch, "prefetch", None)
        if prefetch is not None:
            # A failed prefetch is not reported here: each document's own call fails
            # the same way and says so in its rows.
            with contextlib.suppress(Exception):
                prefetch([key for items, _, _ in entries for item in items for key in item[3:5]])
        for items, indices, scores in entries:
            _score_document(batch, items, indices, scores)
    for state, deferred, scores in outcomes:
        for (node, expected, predicted, left, right, path, ppath), score in zip(
            deferred, scores, strict=True
        ):
            if isinstance(score, BaseException):
                reason = f"not decided: {type(score).__name__}: {score}"
                if reason not in state.undecided_reasons:
                    state.undecided_reasons.append(reason)
                node.emit(state, path, ppath, expected, predicted, None, "FD", reason)
                state.undecided[node.template] = state.undecided.get(node.template, 0) + 1
            else:
                node.settle_scored(expected, predicted, left, right, score, path, ppath, state)


_NOT_ASKED = RuntimeError("the provider was not asked")
"""A placeholder that every document's scores replace before rows are emitted."""


def _score_document(
    batch: DeferredBatch,
    items: list[Deferred],
    indices: list[int],
    scores: list[float | BaseException],
) -> None:
    """One document's pairs of one batch: one call, its answers put in place."""
    try:
        answers = list(batch.score_many([(item[0].comparator, item[3], item[4]) for item in items]))
        if len(answers) != len(items):
            raise RuntimeError(
                f"{type(batch).__name__} answered {len(answers)} of {len(items)} comparisons"
            )
    except Exception as exc:  # a provider failure never aborts the batch
        answers = [exc] * len(items)
    for index, answer in zip(indices, answers, strict=True):
        scores[index] = answer
