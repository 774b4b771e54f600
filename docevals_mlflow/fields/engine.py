"""The comparison engine: a schema compiled into nodes that score one document.

Nodes mirror the schema: scalars (one comparator), objects (named children) and
arrays (an item node plus Hungarian pairing). A document is walked once; every
leaf comparison appends one row tuple and bumps one cell of its field template, so
field, class, document and batch figures are sums of the same cells.

Rows stay plain tuples in a list (``ROW_FIELDS`` names the columns); DataFrames and
pydantic models are built only at the edges.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from scipy.optimize import linear_sum_assignment

from docevals_mlflow.core.paths import key_segment
from docevals_mlflow.core.values import is_empty
from docevals_mlflow.fields.methods import Comparator, ProviderFactory, infer_spec, make_comparator
from docevals_mlflow.fields.schema import ClassSchema, DocumentSchema, FieldSpec

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

Row = tuple[Any, ...]
"""A compact row as the engine keeps it: ``(path, node, expected, actual, score,
outcome, confidence, reason)``; :func:`expand_row` gives the ``ROW_FIELDS`` form."""
_CELL = {"TP": 0, "FA": 1, "FD": 2, "FN": 3, "TN": 4}
_EMPTY_MAP: Mapping[str, Any] = {}
_COMPARATOR_NAMES = {"NUMERIC_EXACT": "NUMERIC"}
DISCOVERED_NOTE = "[Discovered: not in the schema; compared with {label}]"


class WrongType:
    """A predicted value whose shape contradicts the schema (text where a list is due)."""

    __slots__ = ("value", "wanted")

    def __init__(self, value: Any, wanted: str) -> None:
        self.value = value
        self.wanted = wanted

    def reason(self) -> str:
        return f"Wrong type: predicted {type(self.value).__name__} where {self.wanted} was expected"


class DocumentState:
    """What one document's walk accumulates."""

    __slots__ = ("cells", "confidence", "items", "keep_rows", "nodes", "rows")

    def __init__(self, keep_rows: bool, confidence: Mapping[str, float] | None) -> None:
        self.rows: list[Row] = []
        self.cells: dict[str, list[int]] = {}
        self.items: dict[str, list[int]] = {}
        self.nodes: dict[str, ScalarNode | ArrayNode] = {}
        self.keep_rows = keep_rows
        self.confidence = confidence or None


class ScalarNode:
    """A scalar field: one comparator and its threshold."""

    __slots__ = (
        "comparator",
        "discovered",
        "label",
        "method",
        "note",
        "template",
        "threshold",
        "weight",
    )

    def __init__(
        self,
        template: str,
        comparator: Comparator,
        threshold: float,
        *,
        discovered: bool = False,
        label: str | None = None,
        weight: float = 1.0,
    ) -> None:
        self.template = template
        self.weight = weight
        self.comparator = comparator
        self.method = comparator.method
        self.threshold = threshold
        self.label = label or comparator.label
        self.discovered = discovered
        self.note = DISCOVERED_NOTE.format(label=self.label) + " " if discovered else ""

    def emit(
        self,
        state: DocumentState,
        path: str,
        ppath: str | None,
        expected: Any,
        actual: Any,
        score: float | None,
        outcome: str,
        reason: str | None,
    ) -> None:
        """Count one leaf comparison (and keep its row).

        ``reason`` may be ``None`` for scored rows: it is derived from the values
        only when a report asks for it (:func:`expand_row`), which keeps string
        formatting out of the hot loop.
        """
        cells = state.cells.get(self.template)
        if cells is None:
            cells = state.cells[self.template] = [0, 0, 0, 0, 0]
            state.nodes[self.template] = self
        cells[_CELL[outcome]] += 1
        if state.keep_rows:
            confidence = state.confidence.get(ppath) if state.confidence and ppath else None
            state.rows.append((path, self, expected, actual, score, outcome, confidence, reason))

    def describe(self, expected: Any, actual: Any, score: float) -> str:
        """The reason of a scored comparison, recomputed from the values."""
        comparator = self.comparator
        return comparator.reason(comparator.prepare(expected), comparator.prepare(actual), score)

    def settle_unscored(
        self, expected: Any, predicted: Any, path: str, ppath: str | None, state: DocumentState
    ) -> bool:
        """Emit the row when no score is needed (empty sides, wrong type); True if done."""
        expected_empty = is_empty(expected)
        if type(predicted) is WrongType:
            outcome, score = ("FA", None) if expected_empty else ("FD", 0.0)
            self.emit(
                state, path, ppath, expected, predicted.value, score, outcome, predicted.reason()
            )
            return True
        predicted_empty = is_empty(predicted)
        if expected_empty:
            if predicted_empty:
                self.emit(state, path, ppath, expected, predicted, None, "TN", "Both empty")
            else:
                self.emit(
                    state, path, ppath, expected, predicted, None, "FA",
                    "Predicted a value where none was expected",
                )  # fmt: skip
            return True
        if predicted_empty:
            self.emit(
                state, path, ppath, expected, predicted, None, "FN", "Missing from the prediction"
            )
            return True
        if type(predicted) is dict or type(predicted) is list:
            reason = WrongType(predicted, "a single value").reason()
            self.emit(state, path, ppath, expected, predicted, 0.0, "FD", reason)
            return True
        return False

    def settle_scored(
        self,
        expected: Any,
        predicted: Any,
        left: Any,
        right: Any,
        score: float,
        path: str,
        ppath: str | None,
        state: DocumentState,
    ) -> None:
        """Emit TP or FD for two present values whose keys scored ``score``."""
        outcome = "TP" if score >= self.comparator.threshold else "FD"
        self.emit(state, path, ppath, expected, predicted, score, outcome, None)

    def compare(
        self, expected: Any, predicted: Any, path: str, ppath: str | None, state: DocumentState
    ) -> None:
        if self.settle_unscored(expected, predicted, path, ppath, state):
            return
        comparator = self.comparator
        left, right = comparator.prepare(expected), comparator.prepare(predicted)
        self.settle_scored(
            expected, predicted, left, right, comparator.score(left, right), path, ppath, state
        )

    def one_sided(
        self, value: Any, path: str, ppath: str | None, state: DocumentState, expected_side: bool
    ) -> None:
        """Leaves of an unpaired list item: FN on the expected side, FA on the predicted."""
        if is_empty(value):
            return
        if expected_side:
            self.emit(
                state,
                path,
                None,
                value,
                None,
                None,
                "FN",
                "Expected item has no matching predicted item",
            )
        else:
            self.emit(
                state,
                path,
                ppath,
                None,
                value,
                None,
                "FA",
                "Predicted item matches no expected item",
            )


class ObjectNode:
    """An object (IDP group): configured children plus keys discovered in the data.

    Configured children are always compared (absent on both sides they are TN);
    discovered ones only where a document has them.
    """

    __slots__ = ("children", "compiler", "extra", "fallback", "flat", "inferred_class", "template")

    def __init__(
        self,
        template: str,
        children: dict[str, Node],
        compiler: SchemaCompiler,
        *,
        inferred_class: bool,
    ) -> None:
        self.template = template
        self.children = children
        self.extra: dict[str, Node] = {}
        self.compiler = compiler
        # In a class without configuration every field is inferred, and none of them
        # is "discovered" (there is no configuration it could be missing from).
        self.inferred_class = inferred_class
        self.fallback: ScalarNode | None = None
        self.flat = all(isinstance(node, ScalarNode) for node in children.values())
        """Every configured child is a scalar: list items can use the cached fast path."""

    def child(self, key: str, sample: Any) -> Node:
        """The node for ``key``; an unconfigured key gets an inferred node (cached)."""
        node = self.children.get(key) or self.extra.get(key)
        if node is None:
            node = self.compiler.compile(
                infer_spec(sample),
                self.template + key_segment(key),
                discovered=not self.inferred_class,
                inferred_class=self.inferred_class,
            )
            self.extra[key] = node
        return node

    def compare(
        self, expected: Any, predicted: Any, path: str, ppath: str | None, state: DocumentState
    ) -> None:
        if type(expected) is dict or isinstance(expected, Mapping):
            expected_map: Mapping[str, Any] = expected
        elif is_empty(expected):
            expected_map = _EMPTY_MAP
        else:
            self._shape_mismatch(expected, predicted, path, ppath, state)
            return
        if type(predicted) is dict or isinstance(predicted, Mapping):
            predicted_map: Mapping[str, Any] | None = predicted
            wrong = None
        elif type(predicted) is WrongType:
            predicted_map, wrong = None, predicted
        elif is_empty(predicted):
            predicted_map, wrong = _EMPTY_MAP, None
        else:
            predicted_map, wrong = None, WrongType(predicted, "an object")
        for key in self._keys(expected_map, predicted_map):
            value = expected_map.get(key)
            other = predicted_map.get(key) if predicted_map is not None else wrong
            node = self.child(key, value if value is not None else other)
            segment = key_segment(key)
            node.compare(value, other, path + segment, ppath + segment if ppath else None, state)

    def _keys(
        self, expected: Mapping[str, Any], predicted: Mapping[str, Any] | None
    ) -> Iterable[str]:
        children = self.children
        if expected.keys() <= children.keys() and (
            predicted is None or predicted.keys() <= children.keys()
        ):
            return children.keys()
        keys = list(children)
        known = set(keys)
        for source in (expected, predicted or _EMPTY_MAP):
            for key in source:
                if key not in known:
                    known.add(key)
                    keys.append(key)
        return keys

    def _shape_mismatch(
        self, expected: Any, predicted: Any, path: str, ppath: str | None, state: DocumentState
    ) -> None:
        # The ground truth holds a plain value where the schema has an object: compare
        # the values as they are rather than dropping the field.
        if self.fallback is None:
            node = self.compiler.compile(FieldSpec(method="EXACT"), self.template)
            assert isinstance(node, ScalarNode)
            self.fallback = node
        self.fallback.compare(expected, predicted, path, ppath, state)

    def one_sided(
        self, value: Any, path: str, ppath: str | None, state: DocumentState, expected_side: bool
    ) -> None:
        """Every non-empty leaf below ``value`` as FN (expected side) or FA."""
        if not isinstance(value, Mapping):
            if not is_empty(value):
                expected, predicted = (value, None) if expected_side else (None, value)
                self._shape_mismatch(expected, predicted, path, ppath, state)
            return
        for key, item in value.items():
            if is_empty(item):
                continue
            segment = key_segment(key)
            self.child(key, item).one_sided(
                item, path + segment, ppath + segment if ppath else None, state, expected_side
            )

    def item_columns(self, items: Sequence[Any]) -> list[tuple[str, bool, Node]]:
        """``(key, configured, node)`` for configured keys and keys found in ``items``."""
        children = self.children
        columns: list[tuple[str, bool, Node]] = [
            (key, True, node) for key, node in children.items()
        ]
        seen: set[str] = set()
        for item in items:
            if (type(item) is dict or isinstance(item, Mapping)) and not (
                item.keys() <= children.keys()
            ):
                for key, value in item.items():
                    if key not in children and key not in seen and value is not None:
                        seen.add(key)
                        columns.append((key, False, self.child(key, value)))
        return columns


class ArrayNode:
    """A list (IDP list attribute / HUNGARIAN): items paired by optimal assignment."""

    __slots__ = ("item", "label", "match_threshold", "template")

    def __init__(self, template: str, item: Node, match_threshold: float) -> None:
        self.template = template
        self.item = item
        self.match_threshold = match_threshold
        if isinstance(item, ScalarNode):
            method = _COMPARATOR_NAMES.get(item.method, item.method)
            detail = f"comparator: {method}"
            if item.method in ("FUZZY", "LEVENSHTEIN"):
                detail += f", threshold: {item.threshold:g}"
            self.label = f"HUNGARIAN ({detail})"
        else:
            self.label = f"HUNGARIAN (match threshold: {match_threshold:g})"

    def _count_items(self, state: DocumentState, matched: int, missed: int, extra: int) -> None:
        counts = state.items.get(self.template)
        if counts is None:
            counts = state.items[self.template] = [0, 0, 0]
            state.nodes[self.template] = self
        counts[0] += matched
        counts[1] += missed
        counts[2] += extra

    def compare(
        self, expected: Any, predicted: Any, path: str, ppath: str | None, state: DocumentState
    ) -> None:
        expected_list = _as_list(expected)
        if type(predicted) is WrongType or (
            not isinstance(predicted, list) and not is_empty(predicted)
        ):
            wrong = predicted if type(predicted) is WrongType else WrongType(predicted, "a list")
            self._against_wrong(expected_list, wrong, path, state)
            return
        predicted_list: list[Any] = predicted if isinstance(predicted, list) else []
        expected_items = [(i, v) for i, v in enumerate(expected_list) if not is_empty(v)]
        predicted_items = [(j, v) for j, v in enumerate(predicted_list) if not is_empty(v)]
        expected_values = [v for _, v in expected_items]
        predicted_values = [v for _, v in predicted_items]
        item = self.item
        columns: list[Column] | None = None
        if not expected_values or not predicted_values:
            pairs: list[tuple[int, int]] = []
        elif isinstance(item, ScalarNode):
            comparator = item.comparator
            similarity = comparator.matrix(
                [comparator.prepare(v) for v in expected_values],
                [comparator.prepare(v) for v in predicted_values],
            )
            pairs = _assign(similarity, comparator.threshold)
        else:
            assert isinstance(item, ObjectNode)
            similarity, columns = item_similarity(item, expected_values, predicted_values)
            pairs = _assign(similarity, self.match_threshold)
        for row, col in pairs:
            i, value = expected_items[row]
            j, other = predicted_items[col]
            item_path = f"{path}[{i}]"
            item_ppath = f"{ppath}[{j}]" if ppath else None
            if columns is not None and type(value) is dict and type(other) is dict:
                _compare_paired_items(columns, row, col, value, other, item_path, item_ppath, state)
            else:
                item.compare(value, other, item_path, item_ppath, state)
        paired_expected = {row for row, _ in pairs}
        paired_predicted = {col for _, col in pairs}
        for row, (i, value) in enumerate(expected_items):
            if row not in paired_expected:
                item.one_sided(value, f"{path}[{i}]", None, state, True)
        extra = 0
        for col, (j, value) in enumerate(predicted_items):
            if col not in paired_predicted:
                item.one_sided(
                    value,
                    f"{path}[{len(expected_list) + extra}]",
                    f"{ppath}[{j}]" if ppath else None,
                    state,
                    False,
                )
                extra += 1
        self._count_items(
            state,
            len(pairs),
            len(expected_items) - len(pairs),
            len(predicted_items) - len(pairs),
        )

    def _against_wrong(
        self, expected_list: list[Any], wrong: WrongType, path: str, state: DocumentState
    ) -> None:
        items = [(i, v) for i, v in enumerate(expected_list) if not is_empty(v)]
        for i, value in items:
            self.item.compare(value, wrong, f"{path}[{i}]", None, state)
        if not items:
            # Nothing expected, something of the wrong shape predicted: one false alarm.
            holder = self.item if isinstance(self.item, ScalarNode) else None
            node = holder or _wrong_shape_node(self)
            node.emit(state, path, None, None, wrong.value, None, "FA", wrong.reason())
        self._count_items(state, 0, len(items), 0)

    def one_sided(
        self, value: Any, path: str, ppath: str | None, state: DocumentState, expected_side: bool
    ) -> None:
        """Items of a list inside an unpaired item: all missed (or all extra)."""
        items = [(i, v) for i, v in enumerate(_as_list(value)) if not is_empty(v)]
        for i, item in items:
            self.item.one_sided(
                item, f"{path}[{i}]", f"{ppath}[{i}]" if ppath else None, state, expected_side
            )
        if expected_side:
            self._count_items(state, 0, len(items), 0)
        else:
            self._count_items(state, 0, 0, len(items))


def _wrong_shape_node(array: ArrayNode) -> ScalarNode:
    item = array.item
    assert isinstance(item, ObjectNode)
    return item.compiler.compile(FieldSpec(method="EXACT"), array.template)  # type: ignore[return-value]


Node = ScalarNode | ObjectNode | ArrayNode


def _as_list(value: Any) -> list[Any]:
    if isinstance(value, list):
        return value
    if is_empty(value):
        return []
    return [value]


def _get(item: Any, key: str) -> Any:
    if type(item) is dict or isinstance(item, Mapping):
        return item.get(key)
    return None


def _assign(similarity: Any, threshold: float) -> list[tuple[int, int]]:
    """Optimal one-to-one pairing; assigned pairs below ``threshold`` are not pairs."""
    rows, cols = linear_sum_assignment(similarity, maximize=True)
    keep = similarity[rows, cols] >= threshold
    return list(zip(rows[keep].tolist(), cols[keep].tolist(), strict=True))


class Column:
    """One attribute across the items of two lists, prepared once for pairing and
    reused to score the attribute of every paired item."""

    __slots__ = (
        "configured",
        "expected_keys",
        "expected_present",
        "expected_values",
        "key",
        "node",
        "predicted_keys",
        "predicted_present",
        "predicted_values",
        "scores",
        "segment",
    )

    def __init__(self, key: str, configured: bool, node: Node) -> None:
        self.key = key
        self.segment = key_segment(key)
        self.configured = configured
        self.node = node
        self.expected_values: list[Any] = []
        self.predicted_values: list[Any] = []
        self.expected_keys: list[Any] = []
        self.predicted_keys: list[Any] = []
        self.expected_present: list[bool] = []
        self.predicted_present: list[bool] = []
        self.scores: Any = None


def item_similarity(
    node: ObjectNode, expected: list[Any], predicted: list[Any]
) -> tuple[Any, list[Column]]:
    """``len(expected) x len(predicted)`` similarity of list items (objects).

    The weighted mean, over the item's scalar attributes present on at least one
    side, of the attribute's score (0 where only one side has it); items with no
    such attribute on either side are fully similar. Nested objects and lists inside
    items do not take part in pairing; they are compared once items are paired.
    Vectorised: one comparator matrix per attribute.
    """
    shape = (len(expected), len(predicted))
    total: Any = None
    weight_sum: Any = 0.0
    columns = []
    for key, configured, child in node.item_columns([*expected, *predicted]):
        column = Column(key, configured, child)
        columns.append(column)
        column.expected_values = [
            item.get(key) if type(item) is dict else _get(item, key) for item in expected
        ]
        column.predicted_values = [
            item.get(key) if type(item) is dict else _get(item, key) for item in predicted
        ]
        if not isinstance(child, ScalarNode):
            continue
        comparator = child.comparator
        blank = comparator.prepare("")
        column.expected_present, column.expected_keys = _prepare_column(
            column.expected_values, comparator.prepare, blank
        )
        column.predicted_present, column.predicted_keys = _prepare_column(
            column.predicted_values, comparator.prepare, blank
        )
        all_left, all_right = all(column.expected_present), all(column.predicted_present)
        if not (all_left or all_right) and not (
            any(column.expected_present) or any(column.predicted_present)
        ):
            continue
        scores = column.scores = comparator.matrix(column.expected_keys, column.predicted_keys)
        weight = child.weight
        if all_left and all_right:
            # Every item has this attribute on both sides (the usual case): no masks.
            contribution = scores * weight if weight != 1.0 else scores
            weight_sum = weight_sum + weight
        else:
            left_present = np.array(column.expected_present, dtype=bool)[:, None]
            right_present = np.array(column.predicted_present, dtype=bool)[None, :]
            contribution = np.where(left_present & right_present, scores * weight, 0.0)
            weight_sum = weight_sum + weight * (left_present | right_present)
        total = contribution.copy() if total is None else total + contribution
    if total is None:
        return np.ones(shape, dtype=np.float64), columns
    if isinstance(weight_sum, float):
        return total / weight_sum, columns
    with np.errstate(invalid="ignore", divide="ignore"):
        similarity = np.where(
            weight_sum > 0, total / np.where(weight_sum > 0, weight_sum, 1.0), 1.0
        )
    return similarity, columns


def _prepare_column(values: list[Any], prepare: Any, blank: Any) -> tuple[list[bool], list[Any]]:
    """Presence flags and comparison keys of one attribute across items."""
    present = []
    keys = []
    for value in values:
        if is_empty(value):
            present.append(False)
            keys.append(blank)
        else:
            present.append(True)
            keys.append(prepare(value))
    return present, keys


def _compare_paired_items(
    columns: list[Column],
    row: int,
    col: int,
    expected: dict[str, Any],
    predicted: dict[str, Any],
    path: str,
    ppath: str | None,
    state: DocumentState,
) -> None:
    """Compare two paired items, reusing the scores computed for pairing."""
    for column in columns:
        key = column.key
        if not column.configured and key not in expected and key not in predicted:
            continue
        value = column.expected_values[row]
        other = column.predicted_values[col]
        child_path = path + column.segment
        child_ppath = ppath + column.segment if ppath else None
        node = column.node
        if column.scores is None or not isinstance(node, ScalarNode):
            node.compare(value, other, child_path, child_ppath, state)
        elif (
            # Both present and plain: the common case needs no emptiness re-check.
            column.expected_present[row]
            and column.predicted_present[col]
            and type(other) is not dict
            and type(other) is not list
        ) or not node.settle_unscored(value, other, child_path, child_ppath, state):
            node.settle_scored(
                value,
                other,
                column.expected_keys[row],
                column.predicted_keys[col],
                float(column.scores[row, col]),
                child_path,
                child_ppath,
                state,
            )


class SchemaCompiler:
    """Turns field specs into nodes, building comparators once."""

    def __init__(self, providers: Mapping[str, ProviderFactory] | None = None) -> None:
        self.providers = providers

    def compile(
        self,
        spec: FieldSpec,
        template: str,
        *,
        discovered: bool = False,
        inferred_class: bool = False,
    ) -> Node:
        """The node for ``spec`` at field template ``template``."""
        if spec.fields is not None:
            children = {
                key: self.compile(
                    child,
                    template + key_segment(key),
                    discovered=discovered,
                    inferred_class=inferred_class,
                )
                for key, child in spec.fields.items()
            }
            return ObjectNode(template, children, self, inferred_class=inferred_class)
        if spec.items is not None:
            item = self.compile(
                spec.items, template + "[]", discovered=discovered, inferred_class=inferred_class
            )
            node = ArrayNode(template, item, spec.match_threshold)
            if isinstance(item, ScalarNode):
                # Rows of a list of scalars carry the list's method label.
                item.label = node.label
                if discovered:
                    item.note = DISCOVERED_NOTE.format(label=node.label) + " "
            return node
        comparator = make_comparator(spec, providers=self.providers, where=template)
        return ScalarNode(
            template,
            comparator,
            spec.effective_threshold,
            discovered=discovered,
            weight=spec.weight,
        )

    def compile_class(self, schema_class: ClassSchema | None) -> ObjectNode:
        """The root node of a document class (an unconfigured class discovers all)."""
        fields = schema_class.fields if schema_class is not None else {}
        root = self.compile(
            FieldSpec(fields=dict(fields)), "$", inferred_class=schema_class is None
        )
        assert isinstance(root, ObjectNode)
        return root


def compile_schema(
    schema: DocumentSchema, providers: Mapping[str, ProviderFactory] | None = None
) -> dict[str | None, ObjectNode]:
    """Root nodes for every class of ``schema`` (compiling every comparator up front,
    so a method without a provider fails before any document is read)."""
    compiler = SchemaCompiler(providers)
    return {
        schema_class.name: compiler.compile_class(schema_class) for schema_class in schema.classes
    }


def expand_row(row: Row) -> tuple[Any, ...]:
    """A compact row in ``ROW_FIELDS`` order, with its reason filled in."""
    path, node, expected, actual, score, outcome, confidence, reason = row
    if reason is None:
        reason = node.describe(expected, actual, score)
    if node.note:
        reason = node.note + reason
    return (
        path,
        node.template,
        node.label,
        node.threshold,
        expected,
        actual,
        score,
        outcome,
        confidence,
        node.discovered,
        reason,
    )
