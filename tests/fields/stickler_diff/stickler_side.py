"""Reading Stickler 1.0's cells, assignments and similarities.

``Model(**expected).compare_with(Model(**predicted), include_confusion_matrix=True)``
gives a tree under ``["confusion_matrix"]["fields"]``. What it counts, as probed on
``stickler-eval`` 1.0.0 (``tests/fields/test_stickler_differential.py`` pins these
readings in ``test_stickler_reads_as_documented``):

* **Scalar** ``fields.<name>.overall``: one of TP/FA/FD/FN/TN. Null is ``None``, a
  missing key or ``""``; **whitespace-only text is a value** (``"  "`` against
  ``"x"`` is FD, ``"  "`` against nothing is FN). Present values are compared with the
  field's comparator: ``score >= threshold`` is TP, below it FD.
* **Group** (nested object): absent (``None`` or missing) on one side is one FN/FA
  for the group, not descended; absent on both sides is one TN for the group. An
  object on both sides is descended (``fields.<group>.fields.<leaf>.overall`` per
  leaf); its own ``overall`` is then one TP/FD from the object similarity against
  the group's threshold (0.7), which this harness does not compare. **``{}`` is an
  object**, not absent: pydantic makes it a model with every leaf ``None``, so
  ``{}`` against a missing group is one FN for the group.
* **List of scalars** ``fields.<name>.overall`` counts items: the assignment
  (munkres) always pairs min(m, n) items; a pair scoring at least the comparator's
  threshold (with a 1e-10 tolerance) is TP, below it FD; leftovers are FN / FA. Both
  lists ``None``/``[]`` is one TN; one side ``None``/``[]`` gives one FN (FA) per
  item of the other. ``""`` and ``None`` items are items: ``["a", ""]`` against
  ``["a"]`` is TP 1, FN 1; ``""`` against ``""`` is TP for text comparators and FD
  for ``NumericComparator`` (no number in it).
* **List of objects** ``fields.<name>.overall`` counts items: min(m, n) pairs by
  munkres on ``1 - similarity``; a pair with ``similarity >= match_threshold`` (bare
  ``>=``) is TP, below it FD; leftovers FN / FA; both empty one TN. The similarity is
  ``gt_item.compare(pred_item)``: the weighted mean, over the item's fields that are
  not null on both sides (``None``, ``""`` — whitespace is a value), of each field's
  raw score (0 where one side is null). **Nested groups and lists take part**: a
  group (present when it is an object, ``{}`` too) with its ``compare_with``
  score, the mean over *all* its fields of the threshold-clipped score (a field
  absent on both sides counts 1.0: ``{"a": "abcd"}`` against ``{"a": "abxx"}`` with
  Levenshtein 0.7 and a second, empty field is 0.5, not 0.25); a list with the mean
  score of its assigned items times the coverage (``["a", "b"]`` against ``["a"]``:
  0.5). Items with no field present on either side are fully similar (1.0).
  ``fields.<name>.fields.<attr>.overall`` counts the leaves of the pairs at or above
  the match threshold only (FD pairs and leftovers are not descended: their issue
  #94). Leaves of those pairs use a different null rule: ``FieldHelper.is_null_value``
  strips text, so **whitespace is null inside list items**; a nested group or list
  inside an item follows the group / list rules above (whitespace is a value again).
* Keys the model does not declare (at the root or in list items) are kept in
  ``extra_fields`` and are in no field's cells (only in the root ``overall``, which
  this harness does not read).
"""

from __future__ import annotations

import functools
import json
import typing
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

from tests.fields.stickler_diff.corpus import (
    Group,
    Node,
    Scalar,
    ScalarList,
    stickler_json_schema,
)

Cells = list[int]
"""``[tp, fa, fd, fn, tn]``."""
Key = tuple[str, str]
"""``(unit, template)``: unit ``leaf`` (a scalar, or the items of a list of scalars
under ``<list>[]``), ``group`` (a group's own verdict: ``tp`` counts "object on both
sides", whatever Stickler's TP/FD on it), ``items`` (a list of objects' items)."""
CELL_NAMES = ("tp", "fa", "fd", "fn", "tn")


@contextmanager
def quiet() -> Iterator[None]:
    """Stickler warns about deprecated keys and single-document metrics; tests treat
    warnings as errors, so they are silenced around every call into it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@functools.lru_cache(maxsize=256)
def _model_from_text(schema_text: str) -> Any:
    from stickler import StructuredModel

    with quiet():
        return StructuredModel.from_json_schema(json.loads(schema_text))


def model_class(fields: Mapping[str, Node]) -> Any:
    """The ``StructuredModel`` class for a schema description (cached)."""
    return _model_from_text(json.dumps(stickler_json_schema(fields), sort_keys=True))


def _cells(overall: Mapping[str, Any]) -> Cells:
    return [int(overall.get(name, 0)) for name in CELL_NAMES]


def _group_cells(overall: Mapping[str, Any]) -> Cells:
    cells = _cells(overall)
    return [cells[0] + cells[2], cells[1], 0, cells[3], cells[4]]


def add_cells(out: dict[Key, Cells], key: Key, cells: Sequence[int]) -> None:
    """``out[key] += cells``."""
    current = out.setdefault(key, [0, 0, 0, 0, 0])
    for index, count in enumerate(cells):
        current[index] += count


def _read(
    fields: Mapping[str, Node], tree: Mapping[str, Any], prefix: str, out: dict[Key, Cells]
) -> None:
    for name, node in fields.items():
        entry = tree.get(name)
        if not isinstance(entry, Mapping):
            continue
        overall = entry.get("overall", entry)
        template = f"{prefix}.{name}"
        if isinstance(node, Scalar):
            add_cells(out, ("leaf", template), _cells(overall))
        elif isinstance(node, Group):
            add_cells(out, ("group", template), _group_cells(overall))
            _read(node.fields, entry.get("fields") or {}, template, out)
        elif isinstance(node, ScalarList):
            add_cells(out, ("leaf", template + "[]"), _cells(overall))
        else:
            add_cells(out, ("items", template), _cells(overall))
            _read(node.fields, entry.get("fields") or {}, template + "[]", out)


class SticklerRun:
    """One document compared by Stickler: its model instances and its cells."""

    def __init__(
        self, fields: Mapping[str, Node], expected: Mapping[str, Any], predicted: Any
    ) -> None:
        self.fields = fields
        self.model = model_class(fields)
        with quiet():
            self.gt = self.model(**expected)
            self.pred = self.model(**predicted)
            result = self.gt.compare_with(self.pred, include_confusion_matrix=True)
        self.matrix: Mapping[str, Any] = result["confusion_matrix"]
        self.cells: dict[Key, Cells] = {}
        _read(fields, self.matrix.get("fields", {}), "$", self.cells)


def model_value(instance: Any, path: Sequence[str | int]) -> Any:
    """The value at ``path`` (attribute names and list indices) of a model instance."""
    value = instance
    for step in path:
        if value is None:
            return None
        value = value[step] if isinstance(step, int) else getattr(value, step, None)
    return value


def _unwrap(annotation: Any) -> Any:
    """The model class inside ``Optional[...]`` / ``List[...]`` annotations."""
    while True:
        args = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        origin = typing.get_origin(annotation)
        if origin in (list, typing.Union) or (origin is not None and args):
            if len(args) != 1:
                return annotation
            annotation = args[0]
            continue
        return annotation


def comparison_info(model: Any, path: Sequence[str]) -> Any:
    """The ``ComparableField`` (comparator, threshold, ...) of the field at ``path``
    (attribute names; list levels are stepped through)."""
    cls = model
    for name in path[:-1]:
        cls = _unwrap(cls.model_fields[name].annotation)
    with quiet():
        return cls._get_comparison_info(path[-1])


def scalar_assignment(comparator: Any, gt: list[Any], pred: list[Any]) -> list[tuple[int, int]]:
    """Stickler's own pairing of two lists of values (as ``compare_unordered_lists``
    makes it: munkres with a capture-all threshold and no value normalisation)."""
    from stickler.algorithms.hungarian import HungarianMatcher

    if not gt or not pred:
        return []
    with quiet():
        matcher = HungarianMatcher(comparator, match_threshold=0.0, normalize_values=False)
        pairs = matcher.calculate_metrics(gt, pred)["matched_pairs"]
    return [(int(i), int(j)) for i, j, _ in pairs]


def object_assignment(gt: list[Any], pred: list[Any]) -> list[tuple[int, int, float]]:
    """Stickler's own pairing of two lists of model instances, with its similarities."""
    from stickler.structured_object_evaluator.models.hungarian_helper import HungarianHelper

    if not gt or not pred:
        return []
    with quiet():
        pairs = HungarianHelper().get_complete_matching_info(gt, pred)["matched_pairs"]
    return [(int(i), int(j), float(score)) for i, j, score in pairs]


def object_similarity(gt: Any, pred: Any) -> float:
    """``gt.compare(pred)``: the similarity Stickler pairs list items with."""
    with quiet():
        return float(gt.compare(pred))


def item_parts(gt: Any, pred: Any) -> dict[str, float | None]:
    """Each field's part in ``gt.compare(pred)`` (None: left out, absent on both
    sides), as ``StructuredModel.compare`` computes it."""
    from stickler.structured_object_evaluator.models.null_helper import NullHelper

    parts: dict[str, float | None] = {}
    with quiet():
        for name in type(gt).model_fields:
            if name == "extra_fields":
                continue
            mine, other = getattr(gt, name), getattr(pred, name, None)
            absent = (
                NullHelper.is_effectively_null_for_lists
                if gt._is_list_field(name)
                else NullHelper.is_effectively_null_for_primitives
            )
            if absent(mine) and absent(other):
                parts[name] = None
                continue
            parts[name] = float(gt.compare_field_raw(name, other))
    return parts


def stickler_number(value: Any) -> Decimal | None:
    """What ``NumericComparator`` reads in a value (everything but digits, ``.`` and
    ``-`` deleted; ``(x)`` is ``-x``)."""
    from stickler.comparators.numeric import NumericComparator

    number: Decimal | None = NumericComparator()._extract_number(value)
    return number


def is_null(value: Any) -> bool:
    """Stickler's null rule for scalars outside list-item leaves: ``None`` or ``""``
    (``NullHelper.is_effectively_null_for_primitives``)."""
    return value is None or (isinstance(value, (str, dict)) and len(value) == 0)


def is_item_leaf_null(value: Any) -> bool:
    """Stickler's null rule for the leaves of paired list items
    (``FieldHelper.is_null_value``): ``None``, or text that is empty once stripped."""
    return value is None or (isinstance(value, str) and not value.strip())


def scalar_outcome(comparator: Any, threshold: float, expected: Any, predicted: Any) -> str:
    """Stickler's cell for one scalar outside list-item leaves."""
    expected_null, predicted_null = is_null(expected), is_null(predicted)
    if expected_null and predicted_null:
        return "TN"
    if expected_null:
        return "FA"
    if predicted_null:
        return "FN"
    with quiet():
        score = comparator.compare(expected, predicted)
    return "TP" if score >= threshold else "FD"


def item_leaf_outcome(comparator: Any, threshold: float, expected: Any, predicted: Any) -> str:
    """Stickler's cell for one leaf of a paired list item
    (``ConfusionMatrixCalculator.classify_field_for_confusion_matrix``)."""
    expected_null, predicted_null = is_item_leaf_null(expected), is_item_leaf_null(predicted)
    if expected_null and predicted_null:
        return "TN"
    if expected_null:
        return "FA"
    if predicted_null:
        return "FN"
    with quiet():
        score = comparator.compare(expected, predicted)
    return "TP" if score >= threshold else "FD"


def raw_score(comparator: Any, expected: Any, predicted: Any) -> float | None:
    """A field's contribution to Stickler's item similarity: ``None`` when both sides
    are null (left out of the mean), 0 when one is, else the comparator's raw score."""
    expected_null, predicted_null = is_null(expected), is_null(predicted)
    if expected_null and predicted_null:
        return None
    if expected_null or predicted_null:
        return 0.0
    with quiet():
        return float(comparator.compare(expected, predicted))


def item_score(comparator: Any, expected: Any, predicted: Any) -> float:
    """The score of two items of a list of scalars (``BaseComparator.compare``:
    ``None`` against ``None`` is 1, against a value 0)."""
    with quiet():
        return float(comparator.compare(expected, predicted))


def read_matrix(fields: Mapping[str, Node], matrix: Mapping[str, Any]) -> dict[Key, Cells]:
    """The cells of a confusion-matrix tree, keyed as :data:`Key`."""
    out: dict[Key, Cells] = {}
    _read(fields, matrix.get("fields", {}), "$", out)
    return out


__all__ = [
    "CELL_NAMES",
    "Cells",
    "Key",
    "SticklerRun",
    "add_cells",
    "comparison_info",
    "is_item_leaf_null",
    "item_leaf_outcome",
    "is_null",
    "item_parts",
    "item_score",
    "model_class",
    "model_value",
    "object_assignment",
    "object_similarity",
    "quiet",
    "raw_score",
    "read_matrix",
    "scalar_assignment",
    "scalar_outcome",
    "stickler_number",
]
