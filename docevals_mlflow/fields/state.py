"""What one document's comparison accumulates, and the types the walk uses."""

from __future__ import annotations

from collections.abc import Generator, Mapping
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    from docevals_mlflow.fields.leaves import ScalarNode
    from docevals_mlflow.fields.lists import ArrayNode
    from docevals_mlflow.fields.objects import ObjectNode
    from docevals_mlflow.fields.paired_items import Block

    Node: TypeAlias = ScalarNode | ObjectNode | ArrayNode

ROW_FIELDS = (
    "path",
    "template",
    "method",
    "threshold",
    "expected",
    "actual",
    "score",
    "outcome",
    "confidence",
    "discovered",
    "reason",
)
"""Columns of a row tuple, in order."""

SimilarityRequest = tuple["ObjectNode", list[Any], list[Any], float, bool]
"""A list's item node, its expected and predicted items, the match threshold, and
whether pairs below it are kept as weak pairs (``pairing: stickler``)."""
SimilarityResult = tuple[list[tuple[int, int]], list[tuple[int, int, float]], "Block"]
"""The paired ``(expected row, predicted column)`` items at or above the threshold,
the weak pairs ``(row, column, similarity)`` below it, and the scores behind them."""
Walk = Generator[SimilarityRequest, SimilarityResult, None]
"""Comparing an object or a list: a generator that yields each list's items and is
sent back their similarity, so that a driver can compute the similarities of many
documents' lists in one vectorised step (:func:`run_walks`)."""

Row = tuple[Any, ...]
"""A compact row as the engine keeps it: ``(path, node, expected, actual, score,
outcome, confidence, reason)``; :func:`expand_row` gives the ``ROW_FIELDS`` form."""
CELL = {"TP": 0, "FA": 1, "FD": 2, "FN": 3, "TN": 4}


class WrongType:
    """A predicted value whose shape contradicts the schema (text where a list is due)."""

    __slots__ = ("value", "wanted")

    def __init__(self, value: Any, wanted: str) -> None:
        self.value = value
        self.wanted = wanted

    def reason(self) -> str:
        return f"Wrong type: predicted {type(self.value).__name__} where {self.wanted} was expected"


Deferred = tuple[Any, Any, Any, Any, Any, str, "str | None"]
"""``(node, expected, predicted, left key, right key, path, predicted path)``."""


class DocumentState:
    """What one document's walk accumulates."""

    __slots__ = (
        "cells",
        "confidence",
        "deferred",
        "document_id",
        "items",
        "keep_rows",
        "nodes",
        "rows",
        "undecided",
        "undecided_reasons",
        "unparsed",
        "violations",
    )

    def __init__(
        self,
        keep_rows: bool,
        confidence: Mapping[str, float] | None,
        document_id: str | None = None,
    ) -> None:
        self.document_id = document_id
        """Which document this is (for provider calls' traces), when it has an id."""
        self.rows: list[Row] = []
        self.deferred: list[Deferred] = []
        """Comparisons waiting for a provider (SEMANTIC, LLM), decided in one batch."""
        self.undecided: dict[str, int] = {}
        """Per template, deferred comparisons the provider failed to decide (counted
        as FD, the worst case)."""
        self.undecided_reasons: list[str] = []
        """Why, once per distinct reason."""
        self.cells: dict[str, list[int]] = {}
        self.items: dict[str, list[int]] = {}
        self.nodes: dict[str, ScalarNode | ArrayNode] = {}
        self.keep_rows = keep_rows
        self.confidence = confidence or None
        self.unparsed: dict[str, int] = {}
        """Per template, values of a numeric field that are not numbers."""
        self.violations: list[ShapeViolation] = []
        """Places where the ground truth contradicts the schema's shape."""

    def violation(self, path: str, wanted: str, value: Any) -> None:
        """Record ground truth of the wrong shape at ``path`` (``wanted``: what the
        schema declares there)."""
        self.violations.append((path, wanted, shape_name(value)))


ShapeViolation = tuple[str, str, str]
"""``(path, what the schema declares, what the ground truth holds)``."""


def shape_name(value: Any) -> str:
    """How a value's shape reads in a message: ``a list``, ``an object``, ``a single value``."""
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list | tuple):
        return "a list"
    return f"a single value ({type(value).__name__})"
