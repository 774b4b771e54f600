"""The SEMANTIC field method: cosine similarity of embeddings, with the texts of every
SEMANTIC field of one client embedded together."""

from __future__ import annotations

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
from docevals_mlflow.judges.embeddings import EmbeddingClient


class SemanticComparator:
    """``SEMANTIC``: cosine similarity of embeddings, matched at ``threshold``.

    List items are paired by embedding similarity too. When the embeddings request
    for pairing fails, the items are paired by text similarity instead (counted in
    ``pairing_fallbacks``) rather than stopping the batch; the values themselves are
    then decided, or left undecided, as any other SEMANTIC comparison.
    """

    method = "SEMANTIC"
    deferred = True

    def __init__(self, client: EmbeddingClient, *, threshold: float) -> None:
        self.client = client
        self.batch = SemanticBatch(client)
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
        return _cosines(self.client, pairs)

    def matrix(self, expected: Sequence[Any], predicted: Sequence[Any]) -> Matrix:
        if not expected or not predicted:
            return np.zeros((len(expected), len(predicted)), dtype=np.float64)
        try:
            vectors = self.client.embed([*expected, *predicted])
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
            vectors = self.client.embed([*expected, *predicted])
        except Exception as error:  # as in matrix
            self._fallback(error)
            return text_ranking_pairwise(expected, predicted, left, right)
        left_matrix = np.vstack(vectors[: len(expected)])
        right_matrix = np.vstack(vectors[len(expected) :])
        return np.clip(np.einsum("ij,ij->i", left_matrix[left], right_matrix[right]), 0.0, 1.0)

    def reason(self, expected: Any, predicted: Any, score: float) -> str:
        relation = ">=" if score >= self.threshold else "below"
        return f"Semantic similarity {score:.2f} {relation} threshold {self.threshold:g}"


def _cosines(client: EmbeddingClient, pairs: Sequence[tuple[Any, Any]]) -> list[float]:
    vectors = client.embed([text for pair in pairs for text in pair])
    return [
        clip_score(float(np.dot(vectors[2 * index], vectors[2 * index + 1])))
        for index in range(len(pairs))
    ]


class SemanticBatch:
    """The SEMANTIC fields of one embedding client, decided together: a chunk's new
    texts of every field are embedded at once (``prefetch``), and a document's pairs
    of every field need at most one more request. Batches of the same client are
    equal, so comparators built apart still share one."""

    __slots__ = ("client",)

    def __init__(self, client: EmbeddingClient) -> None:
        self.client = client

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SemanticBatch) and other.client is self.client

    def __hash__(self) -> int:
        return id(self.client)

    def prefetch(self, keys: Sequence[Any]) -> None:
        """Embed every text of a chunk in as few requests as possible."""
        self.client.embed([key for key in keys if key])

    def score_many(self, pairs: Sequence[tuple[Any, Any, Any]]) -> list[float]:
        """Cosine similarity of each ``(comparator, expected, predicted)``.

        Raises:
            ProviderError: the embeddings request failed; every pair is undecided.
        """
        return _cosines(self.client, [(left, right) for _, left, right in pairs])
