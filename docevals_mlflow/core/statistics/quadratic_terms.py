"""Chance terms of agreement statistics under bootstrap weights: for rows of
document weights ``w``, ``sum_k (w . left_k) (w . right_k)`` per field, where
``left_k``/``right_k`` are documents' counts of category ``k``.

A category seen in one document only (most typed values) contributes
``w_d^2 a_dk b_dk``, one column per field; only categories shared by documents need a
column of their own, so a batch of resamples costs a few sparse products.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import sparse

from docevals_mlflow.core.statistics.intervals import FloatArray

IntArray = npt.NDArray[np.int64]
Counts = tuple[IntArray, IntArray, FloatArray]
"""Category counts of documents: document, category (column), count; one row per
(document, category) pair (a field has one unit per document)."""


def joined(parts: list[Counts]) -> Counts:
    """The rows of several tables of counts as one."""
    if not parts:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0)
    doc, category, count = (np.concatenate(column) for column in zip(*parts, strict=True))
    return doc, category, count


class Quadratic:
    """``sum_k (w . left_k) (w . right_k)`` per field, for rows of weights ``w``
    (``right`` ``None``: the same counts as ``left``)."""

    def __init__(
        self, left: Counts, right: Counts | None, owner: IntArray, shape: tuple[int, int]
    ) -> None:
        documents, categories = shape[0], len(owner)
        both = left if right is None else joined([left, right])
        # A category is shared when two documents or more hold it.
        held = np.unique(both[1] * documents + both[0])
        shared = np.flatnonzero(np.bincount(held // documents, minlength=categories) > 1)
        column = np.full(categories, -1, dtype=np.int64)
        column[shared] = np.arange(len(shared))
        doc, category, count = left
        if right is None:
            product = count * count
        else:
            # The right count of each left (document, category); 0 where it has none.
            keys = right[0] * categories + right[1]
            order = np.argsort(keys)
            wanted = doc * categories + category
            at = np.minimum(np.searchsorted(keys[order], wanted), max(len(keys) - 1, 0))
            found = keys[order][at] == wanted if len(keys) else np.zeros(len(doc), bool)
            product = np.where(found, count * (right[2][order][at] if len(keys) else 0), 0.0)
        alone = column[category] < 0
        self.diagonal = np.bincount(
            doc[alone] * shape[1] + owner[category[alone]],
            weights=product[alone],
            minlength=shape[0] * shape[1],
        ).reshape(shape)
        self.left = _matrix(left, column, documents, len(shared))
        self.right = self.left if right is None else _matrix(right, column, documents, len(shared))
        fold = (np.ones(len(shared)), (np.arange(len(shared)), owner[shared]))
        self.fold = sparse.csr_matrix(fold, shape=(len(shared), shape[1]))

    def __call__(self, weights: FloatArray) -> FloatArray:
        result = (weights * weights) @ self.diagonal
        if self.fold.shape[0]:
            left = _weighted(weights, self.left)
            right = left if self.right is self.left else _weighted(weights, self.right)
            result += np.asarray((self.fold.T @ (left * right).T).T)
        return np.asarray(result)


def _matrix(found: Counts, column: IntArray, rows: int, shared: int) -> Any:
    """The counts of the shared categories as a sparse ``documents x shared`` matrix."""
    doc, category, count = found
    kept = column[category] >= 0
    cells = (count[kept], (doc[kept], column[category[kept]]))
    return sparse.csr_matrix(cells, shape=(rows, shared))


def _weighted(weights: FloatArray, matrix: Any) -> FloatArray:
    """``weights @ matrix`` for a sparse ``matrix`` (documents x categories)."""
    return np.asarray((matrix.T @ weights.T).T)
