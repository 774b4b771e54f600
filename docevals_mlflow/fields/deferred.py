"""Comparisons that wait for a provider (SEMANTIC, LLM), decided in batches.

While a document is walked, comparisons whose score comes from a provider are only
queued (:class:`~docevals_mlflow.fields.state.DocumentState.deferred`). Once a chunk
of documents has been walked, :func:`resolve_deferred` asks each provider once per
document for all of that document's pairs, and emits the rows.

While a provider is asked, :func:`serving` says for which documents (and, for one
document's pairs, which field each pair belongs to), so that the provider can record
its call for that document's trace in a :class:`ProviderCallLog`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Protocol

from docevals_mlflow.fields.state import Deferred, DocumentState


@dataclass(frozen=True)
class ServedDocument:
    """A document a provider call serves: its id, and the field template and prepared
    keys of each of its pairs in the call (in the order the provider is given them)."""

    id: str | None
    templates: tuple[str, ...]
    keys: tuple[Any, ...] = ()


_SERVING: ContextVar[tuple[ServedDocument, ...]] = ContextVar("docevals_serving", default=())


def serving() -> tuple[ServedDocument, ...]:
    """The documents the provider call being made serves: one for a document's
    ``score_many``, every document of the chunk for a ``prefetch``, none outside
    :func:`resolve_deferred` (list items paired while a document is walked)."""
    return _SERVING.get()


@contextlib.contextmanager
def _serving(documents: tuple[ServedDocument, ...]) -> Iterator[None]:
    token = _SERVING.set(documents)
    try:
        yield
    finally:
        _SERVING.reset(token)


@dataclass
class ProviderCallLog:
    """The provider calls of SEMANTIC and LLM fields: one JSON-ready entry per call and
    document it served (a call shared by several documents gives each its share; see
    ``docs/mlflow-runs.md``). An entry holds ``call`` (the call's number, shared by its
    shares), ``method``, ``fields``, ``document``, ``model``, ``provider``, ``usage``
    (requests, tokens, ``cost_usd`` when priced), ``latency_ms``, ``cached``,
    ``cache_hits``, ``share``, ``inputs``, ``outputs`` and ``error``."""

    entries: list[dict[str, Any]] = field(default_factory=list)
    calls: int = 0

    def new_call(self) -> int:
        """The number of a new call."""
        self.calls += 1
        return self.calls

    def record(
        self,
        *,
        call: int,
        method: str,
        document: str | None,
        fields: Sequence[str],
        identity: dict[str, Any],
        usage: dict[str, float],
        latency_ms: float,
        cached: bool = False,
        cache_hits: int = 0,
        share: dict[str, Any] | None = None,
        inputs: Any = None,
        outputs: Any = None,
        error: str | None = None,
    ) -> None:
        """Keep the entry of one call (or one document's share of it)."""
        self.entries.append(
            {
                "call": call,
                "method": method,
                "document": document,
                "fields": list(dict.fromkeys(fields)),
                "model": identity.get("model"),
                "provider": identity.get("provider"),
                "usage": usage,
                "latency_ms": round(latency_ms, 3),
                "cached": cached,
                "cache_hits": cache_hits,
                "share": share,
                "inputs": inputs,
                "outputs": outputs,
                "error": error,
            }
        )


CALL_TEXT = 200
"""Characters of each value a call entry quotes (the rows hold the values in full)."""


def clipped(value: Any) -> str:
    """``value`` as text of at most :data:`CALL_TEXT` characters."""
    text = str(value)
    return text if len(text) <= CALL_TEXT else text[: CALL_TEXT - 1] + "…"


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
    groups: dict[Any, list[_Group]] = {}
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
            groups.setdefault(batch, []).append((state, items, indices, scores))
    for batch, entries in groups.items():
        _prefetch(batch, entries)
        for state, items, indices, scores in entries:
            templates = tuple(item[0].template for item in items)
            with _serving((ServedDocument(state.document_id, templates),)):
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


def _prefetch(batch: DeferredBatch, entries: list[_Group]) -> None:
    """Offer every key of the chunk's documents to the batch's ``prefetch``, if any."""
    prefetch = getattr(batch, "prefetch", None)
    if prefetch is None:
        return
    served = tuple(
        ServedDocument(
            state.document_id,
            tuple(item[0].template for item in items),
            tuple(key for item in items for key in item[3:5]),
        )
        for state, items, _, _ in entries
    )
    # A failed prefetch is not reported here: each document's own call fails the
    # same way and says so in its rows.
    with contextlib.suppress(Exception), _serving(served):
        prefetch([key for document in served for key in document.keys])


_Group = tuple[DocumentState, list[Deferred], list[int], list[float | BaseException]]
"""One document's pairs of one batch: its state, the pairs, their places, its scores."""

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
