"""Reading our field engine's rows, item counts and list pairings.

``FieldComparer(schema).compare(expected, predicted)`` gives one row per leaf
comparison (``row_dicts()``: path, template, expected, actual, score, outcome,
reason, discovered, confidence) and item counts per list (``item_counts()``). The
harness assumes the list rules of the engine's ``pairing: stickler`` (the default
being introduced):

* a list of scalars ``$.tags``: rows under template ``$.tags[]``, one per item —
  TP (paired, score at or above the item threshold), FD (a *weak* pair, below it),
  FN / FA (left over) — and one TN row (path ``$.tags``) when both lists are
  empty or absent. Empty items (``None``, ``""``, whitespace) are dropped first.
* a list of objects ``$.items``: ``ItemCounts`` matched / weak / missed / extra /
  empty are Stickler's item-level TP / FD / FN / FA / TN. Leaves of matched pairs
  are compared as any leaf; leaves of weak pairs have reasons starting
  ``Weak pair``; leaves of leftover items have the reasons
  :data:`LEFTOVER_REASONS`. Stickler counts neither of the last two, so only the
  rows of matched pairs are set against its leaf cells.

* the item similarity (docs/field-comparison.md, Lists) is Stickler's: the mean
  over the configured attributes present on at least one side of the attribute's
  score (0 where one side only); a nested object is one attribute (present when it
  is an object, ``{}`` too) scored as Stickler scores a nested model; a nested list
  of values by Stickler's list similarity; items with nothing present are fully
  similar. :func:`item_similarity` computes it from the values.
* attributes the schema does not configure are not in the figures (rows flagged
  ``discovered`` are left out, as Stickler ignores such attributes).

Which predicted item a row compares with is read from the row's ``confidence``:
the comparison is run with a confidence map that gives every predicted path a
distinct number (confidence is looked up by *predicted* position, as
docs/field-comparison.md states), so a row's number names its predicted path.

An engine that predates ``weak`` and ``empty`` item counts is read with 0 for them
(its figures are then expected to differ from Stickler's where those matter).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from docevals_mlflow.core.paths import key_segment
from docevals_mlflow.core.values import is_empty
from docevals_mlflow.fields.compare import FieldComparer
from docevals_mlflow.fields.methods import make_comparator
from docevals_mlflow.fields.schema import DocumentSchema, FieldSpec
from tests.fields.stickler_diff.corpus import (
    Group,
    Node,
    Scalar,
    ScalarList,
    our_schema_dict,
)

LEFTOVER_REASONS = (
    "Expected item has no matching predicted item",
    "Predicted item matches no expected item",
)
WEAK_PREFIX = "Weak pair"


@functools.lru_cache(maxsize=256)
def _comparer_from_text(schema_text: str) -> FieldComparer:
    return FieldComparer(DocumentSchema.model_validate(json.loads(schema_text)))


def comparer(fields: Mapping[str, Node]) -> FieldComparer:
    """A (cached) comparer for a schema description."""
    return _comparer_from_text(json.dumps(our_schema_dict(fields), sort_keys=True))


@functools.lru_cache(maxsize=1024)
def _scalar_comparator(method: str, threshold: float) -> Any:
    return make_comparator(FieldSpec.model_validate({"method": method, "threshold": threshold}))


def scalar_comparator(node: Scalar) -> Any:
    """The engine's comparator for a scalar spec (``prepare`` / ``score`` /
    ``threshold``)."""
    return _scalar_comparator(node.method, node.threshold)


def our_score(node: Scalar, expected: Any, predicted: Any) -> float:
    """The engine's score of two non-empty values."""
    comparator = scalar_comparator(node)
    return float(comparator.score(comparator.prepare(expected), comparator.prepare(predicted)))


def _predicted_paths(fields: Mapping[str, Node], value: Any, path: str, out: list[str]) -> None:
    mapping = value if isinstance(value, Mapping) else {}
    for name, node in fields.items():
        child_path = path + key_segment(name)
        child = mapping.get(name)
        if isinstance(node, Scalar):
            out.append(child_path)
        elif isinstance(node, Group):
            _predicted_paths(node.fields, child, child_path, out)
        elif isinstance(node, ScalarList):
            out.append(child_path)
            if isinstance(child, list):
                out.extend(f"{child_path}[{k}]" for k in range(len(child)))
        elif isinstance(child, list):
            for j, item in enumerate(child):
                _predicted_paths(node.fields, item, f"{child_path}[{j}]", out)


@dataclass
class Row:
    """One of our rows, with the predicted path it compared (when known)."""

    path: str
    template: str
    expected: Any
    actual: Any
    score: float | None
    outcome: str
    reason: str
    discovered: bool
    ppath: str | None


@dataclass
class OurRun:
    """One document compared by our engine."""

    rows: list[Row]
    items: dict[str, dict[str, int]]
    """Per list template: matched, weak, missed, extra, empty (0 when unknown)."""
    by_path: dict[str, list[Row]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for row in self.rows:
            self.by_path.setdefault(row.path, []).append(row)

    def row(self, path: str) -> Row | None:
        """The row of the leaf at ``path`` (None if the engine wrote none)."""
        rows = self.by_path.get(path)
        return rows[0] if rows else None

    def under(self, path: str) -> list[Row]:
        """Rows at ``path`` or below it."""
        return [
            row
            for row in self.rows
            if row.path == path or row.path.startswith((path + ".", path + "["))
        ]


_ITEM_NAMES = ("matched", "weak", "missed", "extra", "empty")


def _item_dict(counts: Any) -> dict[str, int]:
    return {name: int(getattr(counts, name, 0)) for name in _ITEM_NAMES}


def run_ours(fields: Mapping[str, Node], expected: Any, predicted: Any) -> OurRun:
    """Compare one document, tracing predicted paths through confidence numbers."""
    return run_many(fields, [(expected, predicted)])[0]


def run_many(fields: Mapping[str, Node], documents: Sequence[tuple[Any, Any]]) -> list[OurRun]:
    """Compare several documents (batched: ``compare_many``)."""
    field_comparer = comparer(fields)
    inputs = []
    paths_per_document = []
    for expected, predicted in documents:
        paths: list[str] = []
        _predicted_paths(fields, predicted, "$", paths)
        paths_per_document.append(paths)
        confidence = {path: float(index) for index, path in enumerate(paths)}
        inputs.append((expected, predicted, {"confidence": confidence or None}))
    results = field_comparer.compare_many(inputs)
    runs = []
    for result, paths in zip(results, paths_per_document, strict=True):
        rows = []
        for record in result.row_dicts():
            code = record.get("confidence")
            ppath = paths[int(code)] if code is not None and 0 <= code < len(paths) else None
            rows.append(
                Row(
                    record["path"],
                    record["template"],
                    record["expected"],
                    record["actual"],
                    record["score"],
                    record["outcome"],
                    record["reason"] or "",
                    bool(record["discovered"]),
                    ppath,
                )
            )
        items = {template: _item_dict(counts) for template, counts in result.item_counts().items()}
        runs.append(OurRun(rows, items))
    return runs


_INDEX = re.compile(r"\[(\d+)\]")


def index_after(path: str, prefix: str) -> int | None:
    """``3`` for ``prefix[3]...`` (the list index right after ``prefix``)."""
    if not path.startswith(prefix + "["):
        return None
    match = _INDEX.match(path, len(prefix))
    return int(match.group(1)) if match else None


def item_kind(rows: Sequence[Row]) -> str | None:
    """``matched``, ``weak`` or ``leftover`` for the rows of one list item's direct
    attributes (None when there are none)."""
    if not rows:
        return None
    if any(row.reason.startswith(WEAK_PREFIX) for row in rows):
        return "weak"
    if any(row.reason in LEFTOVER_REASONS for row in rows):
        return "leftover"
    return "matched"


ScalarPart = Callable[[Scalar, Any, Any], "float | None"]
"""A scalar attribute's part in an item similarity: ``None`` when absent on both
sides (left out of the mean), 0 when on one side only, else the score."""
ItemScore = Callable[[Scalar, Any, Any], float]
"""The score of two items of a nested list of values."""
Threshold = Callable[[Scalar], float]


def our_part(node: Scalar, expected: Any, predicted: Any) -> float | None:
    """Our engine's :data:`ScalarPart`."""
    left, right = present(expected), present(predicted)
    if not left and not right:
        return None
    if not (left and right):
        return 0.0
    return our_score(node, expected, predicted)


def our_threshold(node: Scalar) -> float:
    return float(scalar_comparator(node).threshold)


def our_items(values: Any) -> list[Any]:
    """The items of a list of values as our engine counts them (empty ones dropped)."""
    return [value for value in values if present(value)] if isinstance(values, list) else []


NESTED_OBJECT_THRESHOLD = 0.7
"""Stickler's default threshold of an object field (clips objects nested two deep)."""


def item_similarity(
    fields: Mapping[str, Node],
    expected: Any,
    predicted: Any,
    part: ScalarPart = our_part,
    threshold: Threshold = our_threshold,
    items: Callable[[Any], list[Any]] = our_items,
    item_score: ItemScore = our_score,
) -> float:
    """Two list items' similarity as docs/field-comparison.md (Lists) states it, which
    is Stickler's ``compare()``: the mean over the attributes present on at least one
    side of their part; a nested object scored by :func:`group_score`, a nested list
    of values by :func:`list_score` (unclipped); 1 when nothing is present. The
    callables give the engine's view by default, or Stickler's (documented rows
    applied) when the harness derives what Stickler should compute."""
    expected_map = expected if isinstance(expected, Mapping) else {}
    predicted_map = predicted if isinstance(predicted, Mapping) else {}
    parts: list[float] = []
    for name, child in fields.items():
        x, y = expected_map.get(name), predicted_map.get(name)
        if isinstance(child, Scalar):
            value = part(child, x, y)
            if value is not None:
                parts.append(value)
        elif isinstance(child, Group):
            left, right = isinstance(x, Mapping), isinstance(y, Mapping)
            if left and right:
                parts.append(group_score(child.fields, x, y, part, threshold, items, item_score))
            elif left or right:
                parts.append(0.0)
        elif isinstance(child, ScalarList):
            xs, ys = items(x), items(y)
            if xs and ys:
                parts.append(list_score(child.item, xs, ys, item_score, threshold, clip=False))
            elif xs or ys:
                parts.append(0.0)
    return sum(parts) / len(parts) if parts else 1.0


def group_score(
    fields: Mapping[str, Node],
    expected: Any,
    predicted: Any,
    part: ScalarPart = our_part,
    threshold: Threshold = our_threshold,
    items: Callable[[Any], list[Any]] = our_items,
    item_score: ItemScore = our_score,
) -> float:
    """An object nested in list items, as Stickler scores a nested model there (its
    ``compare_with`` overall score): the mean over *every* attribute, each clipped to
    0 below its threshold, 1 when empty on both sides, 0 when on one side only."""
    expected_map = expected if isinstance(expected, Mapping) else {}
    predicted_map = predicted if isinstance(predicted, Mapping) else {}
    parts: list[float] = []
    for name, child in fields.items():
        x, y = expected_map.get(name), predicted_map.get(name)
        if isinstance(child, Scalar):
            value = part(child, x, y)
            if value is None:
                parts.append(1.0)
            else:
                parts.append(value if value >= threshold(child) - 1e-10 else 0.0)
        elif isinstance(child, Group):
            left, right = isinstance(x, Mapping), isinstance(y, Mapping)
            if left and right:
                raw = item_similarity(child.fields, x, y, part, threshold, items, item_score)
                parts.append(raw if raw >= NESTED_OBJECT_THRESHOLD else 0.0)
            else:
                parts.append(0.0 if left or right else 1.0)
        elif isinstance(child, ScalarList):
            xs, ys = items(x), items(y)
            if xs and ys:
                parts.append(list_score(child.item, xs, ys, item_score, threshold, clip=True))
            else:
                parts.append(0.0 if xs or ys else 1.0)
    return sum(parts) / len(parts) if parts else 1.0


def list_score(
    node: Scalar,
    expected: Sequence[Any],
    predicted: Sequence[Any],
    item_score: ItemScore,
    threshold: Threshold,
    *,
    clip: bool,
) -> float:
    """Stickler's similarity of two non-empty lists of values: the mean score of the
    optimal min(m, n) pairs (clipped to 0 below the item threshold when ``clip``),
    times min(m, n) / max(m, n)."""
    from scipy.optimize import linear_sum_assignment

    matrix = np.array([[item_score(node, x, y) for y in predicted] for x in expected])
    rows, cols = linear_sum_assignment(matrix, maximize=True)
    scores = matrix[rows, cols]
    if clip:
        scores = np.where(scores >= threshold(node) - 1e-10, scores, 0.0)
    return float(scores.mean()) * len(rows) / max(len(expected), len(predicted))


def present(value: Any) -> bool:
    """Not empty in our reading (``None``, blank text, ``[]`` and ``{}`` are empty)."""
    return not is_empty(value)


__all__ = [
    "LEFTOVER_REASONS",
    "WEAK_PREFIX",
    "OurRun",
    "Row",
    "comparer",
    "index_after",
    "item_kind",
    "our_score",
    "present",
    "run_many",
    "item_similarity",
    "run_ours",
    "scalar_comparator",
    "our_part",
]
