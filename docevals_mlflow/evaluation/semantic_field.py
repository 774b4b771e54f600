"""The SEMANTIC field method: cosine similarity of embeddings, with the texts of every
SEMANTIC field of one client embedded together."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from docevals_mlflow.evaluation.text_ranking import (
    clip_score,
    field_text,
    text_ranking_matrix,
    text_ranking_pairwise,
)
from docevals_mlflow.fields.comparator import Matrix, prepare_each
from docevals_mlflow.fields.deferred import ProviderCallLog, ServedDocument, clipped, serving
from docevals_mlflow.judges.embeddings import EmbeddingClient, Vector
from docevals_mlflow.judges.usage import Usage


class SemanticComparator:
    """``SEMANTIC``: cosine similarity of embeddings, matched at ``threshold``.

    List items are paired by embedding similarity too. When the embeddings request
    for pairing fails, the items are paired by text similarity instead (counted in
    ``pairing_fallbacks``) rather than stopping the batch; the values themselves are
    then decided, or left undecided, as any other SEMANTIC comparison.
    """

    method = "SEMANTIC"
    deferred = True

    def __init__(
        self, client: EmbeddingClient, *, threshold: float, calls: ProviderCallLog | None = None
    ) -> None:
        self.client = client
        self.calls = calls if calls is not None else ProviderCallLog()
        """Each embeddings request, for the traces of the documents it served."""
        self.batch = SemanticBatch(client, self.calls)
        """Comparisons of every SEMANTIC field of the same client are decided together."""
        self.threshold = threshold
        self.label = f"SEMANTIC (threshold: {threshold:g})"
        self.pairing_fallbacks = 0
        """List pairings that used text similarity because embeddings failed."""
        self.pairing_error: str | None = None
        """The first such failure, for the warning."""

    def _fallback(self, error: Exception) -> None:
        self.pairing_fallbacks += 1
        if self.pairing_error is None:
            self.pairing_error = f"{type(error).__name__}: {error}"

    def config(self) -> dict[str, Any]:
        """Settings that change decisions."""
        return {"method": self.method, "threshold": self.threshold, **self.client.describe()}

    def prepare(self, value: Any) -> Any:
        return field_text(value)

    def prepare_many(self, values: Sequence[Any]) -> tuple[list[bool], list[Any]]:
        return prepare_each(self.prepare, values)

    def prefetch(self, keys: Sequence[Any]) -> None:
        """Embed every text of a chunk in as few requests as possible."""
        self.batch.prefetch(keys)

    def score(self, expected: Any, predicted: Any) -> float:
        return self.score_pairs([(expected, predicted)])[0]

    def score_pairs(self, pairs: Sequence[tuple[Any, Any]]) -> list[float]:
        """Cosine similarity of each pair (one request for the texts not seen yet)."""
        return _cosines(self.client, self.calls, pairs)

    def matrix(self, expected: Sequence[Any], predicted: Sequence[Any]) -> Matrix:
        if not expected or not predicted:
            return np.zeros((len(expected), len(predicted)), dtype=np.float64)
        try:
            vectors = embed(self.client, self.calls, [*expected, *predicted])
        except Exception as error:  # pairing only needs a ranking: never stop the batch
            self._fallback(error)
            return text_ranking_matrix(expected, predicted)
        left = np.vstack(vectors[: len(expected)])
        right = np.vstack(vectors[len(expected) :])
        scores: Matrix = np.clip(left @ right.T, 0.0, 1.0)
        return scores

    def pairwise(
        self, expected: Sequence[Any], predicted: Sequence[Any], left: Any, right: Any
    ) -> Any:
        try:
            vectors = embed(self.client, self.calls, [*expected, *predicted])
        except Exception as error:  # as in matrix
            self._fallback(error)
            return text_ranking_pairwise(expected, predicted, left, right)
        left_matrix = np.vstack(vectors[: len(expected)])
        right_matrix = np.vstack(vectors[len(expected) :])
        return np.clip(np.einsum("ij,ij->i", left_matrix[left], right_matrix[right]), 0.0, 1.0)

    def reason(self, expected: Any, predicted: Any, score: float) -> str:
        relation = ">=" if score >= self.threshold else "below"
        return f"Semantic similarity {score:.2f} {relation} threshold {self.threshold:g}"


def _cosines(
    client: EmbeddingClient, calls: ProviderCallLog, pairs: Sequence[tuple[Any, Any]]
) -> list[float]:
    vectors = embed(client, calls, [text for pair in pairs for text in pair])
    return [
        clip_score(float(np.dot(vectors[2 * index], vectors[2 * index + 1])))
        for index in range(len(pairs))
    ]


class SemanticBatch:
    """The SEMANTIC fields of one embedding client, decided together: a chunk's new
    texts of every field are embedded at once (``prefetch``), and a document's pairs
    of every field need at most one more request. Batches of the same client are
    equal, so comparators built apart still share one."""

    __slots__ = ("calls", "client")

    def __init__(self, client: EmbeddingClient, calls: ProviderCallLog | None = None) -> None:
        self.client = client
        self.calls = calls if calls is not None else ProviderCallLog()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SemanticBatch) and other.client is self.client

    def __hash__(self) -> int:
        return id(self.client)

    def prefetch(self, keys: Sequence[Any]) -> None:
        """Embed every text of a chunk in as few requests as possible."""
        embed(self.client, self.calls, [key for key in keys if key])

    def score_many(self, pairs: Sequence[tuple[Any, Any, Any]]) -> list[float]:
        """Cosine similarity of each ``(comparator, expected, predicted)``.

        Raises:
            ProviderError: the embeddings request failed; every pair is undecided.
        """
        return _cosines(self.client, self.calls, [(left, right) for _, left, right in pairs])


def embed(client: EmbeddingClient, calls: ProviderCallLog, texts: list[str]) -> list[Vector]:
    """``client.embed(texts)``, its requests (if it made any) kept in ``calls``: one
    entry per document served (:func:`~docevals_mlflow.fields.deferred.serving`),
    each with its share of the call (:func:`_record`)."""
    # The client embeds each distinct text once: only the texts it has not seen cost.
    known = getattr(client, "_vectors", {})
    new = [text for text in dict.fromkeys(texts) if text not in known]
    before = client.usage
    started = time.perf_counter()
    error: str | None = None
    try:
        return client.embed(texts)
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
        raise
    finally:
        used = _spent(before, client.usage)
        if used.requests:
            latency_ms = (time.perf_counter() - started) * 1000
            _record(client, calls, new, used, latency_ms, error)


def _spent(before: Usage, after: Usage) -> Usage:
    """What was used between two readings of a client's running total."""
    cost = None
    if after.cost_usd is not None:
        cost = after.cost_usd - (before.cost_usd or 0.0)
    return Usage(
        requests=after.requests - before.requests,
        input_tokens=after.input_tokens - before.input_tokens,
        output_tokens=after.output_tokens - before.output_tokens,
        total_tokens=after.total_tokens - before.total_tokens,
        cost_usd=cost,
    )


def _record(
    client: EmbeddingClient,
    calls: ProviderCallLog,
    texts: list[str],
    used: Usage,
    latency_ms: float,
    error: str | None,
) -> None:
    """One entry per document the call served, each with the share of its requests,
    tokens and cost that the texts it brought (first brought, when documents share a
    text) took, by their characters; the shares add up to the call exactly."""
    documents = serving()
    owner: dict[str, int] = {}
    for index, document in enumerate(documents):
        for key in document.keys:
            owner.setdefault(key, index)
    # One document's own call: every text is its own.
    alone = 0 if len(documents) == 1 else None
    brought: dict[int | None, list[str]] = {}
    for text in texts:
        brought.setdefault(owner.get(text, alone), []).append(text)
    if not brought:
        brought[alone] = []
    weights = {key: max(1, sum(len(text) for text in group)) for key, group in brought.items()}
    shares = {
        name: _split(getattr(used, name), weights)
        for name in ("requests", "input_tokens", "output_tokens", "total_tokens")
    }
    whole = sum(weights.values())
    call = calls.new_call()
    for key, group in brought.items():
        served = documents[key] if key is not None else ServedDocument(None, ())
        usage = {name: float(values[key]) for name, values in shares.items()}
        if used.cost_usd is not None:
            usage["cost_usd"] = used.cost_usd * weights[key] / whole
        calls.record(
            call=call,
            method=SemanticComparator.method,
            document=served.id,
            fields=_fields_of(served, set(group)),
            identity={"model": client.model, "provider": client.provider},
            usage=usage,
            latency_ms=latency_ms,
            share=None
            if len(brought) == 1
            else {"documents": len(brought), "texts": len(group), "of_texts": len(texts)},
            inputs={"texts": [clipped(text) for text in group[:_QUOTED]], "count": len(group)},
            outputs=None if error else {"vectors": len(group)},
            error=error,
        )


_QUOTED = 20
"""Texts an embeddings entry quotes."""


def _fields_of(document: ServedDocument, texts: set[str]) -> list[str]:
    """The fields whose pairs brought ``texts``: each pair has two keys (all of its
    fields when the document's keys are not given: its own call)."""
    if not document.keys:
        return list(document.templates)
    return [
        template
        for index, template in enumerate(document.templates)
        if texts.intersection(document.keys[2 * index : 2 * index + 2])
    ]


def _split(total: int, weights: dict[Any, int]) -> dict[Any, int]:
    """``total`` split in proportion to ``weights``, in whole numbers that add up to it
    (largest remainders first)."""
    whole = sum(weights.values())
    exact = {key: total * weight / whole for key, weight in weights.items()}
    parts = {key: int(value) for key, value in exact.items()}
    left = total - sum(parts.values())
    for key in sorted(exact, key=lambda key: exact[key] - parts[key], reverse=True)[:left]:
        parts[key] += 1
    return parts
