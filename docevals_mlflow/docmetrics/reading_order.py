"""Reading order: normalized edit distance between the expected and predicted order of
block (or line) ids, as OmniDocBench scores reading order.

``order_edit_distance = Levenshtein(expected ids, predicted ids) / max(len(expected),
len(predicted))``: 0 is the right order, 1 nothing in common. Each id is one symbol, so a
block moved elsewhere costs at most two edits, a block missing from the prediction (or an
extra one) one. Two empty orders are at distance 0.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

from rapidfuzz.distance import Levenshtein

from docevals_mlflow.errors import InputError


def _check_unique(ids: Sequence[Hashable], source: str, side: str) -> None:
    seen: dict[Hashable, int] = {}
    for position, block in enumerate(ids):
        if block in seen:
            raise InputError(
                f"block id {block!r} appears twice in the {side} order "
                f"(positions {seen[block] + 1} and {position + 1})",
                source=source,
                expected="each block id once",
            )
        seen[block] = position


@dataclass(frozen=True)
class OrderScore:
    """One page's reading-order distance and the counts behind it."""

    source: str
    distance: float
    edits: int
    expected_blocks: int
    predicted_blocks: int


def score_order(
    expected: Sequence[Hashable],
    predicted: Sequence[Hashable],
    *,
    source: str = "<page>",
) -> OrderScore:
    """The order edit distance of one page's block ids.

    Raises:
        InputError: an id repeated within one order (naming ``source`` and the positions).
    """
    expected, predicted = list(expected), list(predicted)
    _check_unique(expected, source, "expected")
    _check_unique(predicted, source, "predicted")
    longest = max(len(expected), len(predicted))
    edits = int(Levenshtein.distance(expected, predicted)) if longest else 0
    return OrderScore(
        source=source,
        distance=edits / longest if longest else 0.0,
        edits=edits,
        expected_blocks=len(expected),
        predicted_blocks=len(predicted),
    )


def order_edit_distance(
    expected: Sequence[Hashable], predicted: Sequence[Hashable], *, source: str = "<page>"
) -> float:
    """Normalized edit distance between two orders of block ids; see :func:`score_order`."""
    return score_order(expected, predicted, source=source).distance


@dataclass(frozen=True)
class OrderBatch:
    """Per-page scores; ``mean`` over pages and ``overall`` (all edits / all lengths)."""

    pages: tuple[OrderScore, ...]
    mean: float
    overall: float


def score_orders(
    pages: Iterable[tuple[str, Sequence[Hashable], Sequence[Hashable]]],
) -> OrderBatch:
    """Score ``(source, expected ids, predicted ids)`` triples.

    ``mean`` weighs each page once (OmniDocBench's page average); ``overall`` weighs pages
    by length (sum of edits over sum of the longer order's lengths).
    """
    scores = tuple(score_order(want, got, source=source) for source, want, got in pages)
    if not scores:
        raise InputError("no pages to score", expected="at least one page")
    total = sum(max(s.expected_blocks, s.predicted_blocks) for s in scores)
    return OrderBatch(
        pages=scores,
        mean=sum(s.distance for s in scores) / len(scores),
        overall=sum(s.edits for s in scores) / total if total else 0.0,
    )
