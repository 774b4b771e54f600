"""The comparison engine: a schema compiled into nodes that score one document.

Nodes mirror the schema: scalars (one comparator), objects (named children) and
arrays (an item node plus Hungarian pairing). A document is walked once; every
leaf comparison appends one row tuple and bumps one cell of its field template, so
field, class, document and batch figures are sums of the same cells.

Rows stay plain tuples in a list (``ROW_FIELDS`` names the columns); DataFrames and
pydantic models are built only at the edges.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Generator, Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
from scipy.optimize import linear_sum_assignment

from docevals_mlflow.core.paths import key_segment
from docevals_mlflow.core.values import is_empty
from docevals_mlflow.fields.methods import (
    Comparator,
    ProviderFactory,
    infer_spec,
    make_comparator,
    value_kind,
)
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

SimilarityRequest = tuple["ObjectNode", list[Any], list[Any], float]
"""A list's item node, its non-empty expected and predicted items, and the match
threshold."""
SimilarityResult = tuple[list[tuple[int, int]], "Block"]
"""The paired ``(expected row, predicted column)`` items and the scores behind them."""
Walk = Generator[SimilarityRequest, SimilarityResult, None]
"""Comparing an object or a list: a generator that yields each list's items and is
sent back their similarity, so that a driver can compute the similarities of many
documents' lists in one vectorised step (:func:`run_walks`)."""

Row = tuple[Any, ...]
"""A compact row as the engine keeps it: ``(path, node, expected, actual, score,
outcome, confidence, reason)``; :func:`expand_row` gives the ``ROW_FIELDS`` form."""
_CELL = {"TP": 0, "FA": 1, "FD": 2, "FN": 3, "TN": 4}
_EMPTY_MAP: Mapping[str, Any] = {}
_TEXT_IDENTITY_METHODS = frozenset({"EXACT", "NORMALIZED", "FUZZY", "LEVENSHTEIN", "DATE"})
_COMPARATOR_NAMES = {"NUMERIC_EXACT": "NUMERIC"}
DISCOVERED_NOTE = "[Discovered: not in the schema; compared with {label}]"


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a chunk is compared.

    A chunk allocates hundreds of thousands of small tuples and lists, none of them
    in reference cycles; letting the collector scan them repeatedly costs about a
    third of the comparison time. Reference counting still frees everything, and the
    collector is back on between chunks.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


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
        "text_identity",
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
        self.text_identity = self.method in _TEXT_IDENTITY_METHODS
        """Identical non-blank texts always match (not so for numbers: "abc" is no number)."""

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
            elif type(predicted) is dict or type(predicted) is list:
                reason = WrongType(predicted, "a single value").reason()
                self.emit(state, path, ppath, expected, predicted, None, "FA", reason)
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
        if (
            type(expected) is str
            and expected == predicted
            and self.text_identity
            and expected.strip()
        ):
            # Identical text scores 1 under every text method; skip preparing it.
            self.emit(state, path, ppath, expected, predicted, 1.0, "TP", None)
            return
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
        self.extra: dict[tuple[str, str], Node] = {}
        """Inferred nodes for unconfigured keys, by key and value kind."""
        self.compiler = compiler
        # In a class without configuration every field is inferred, and none of them
        # is "discovered" (there is no configuration it could be missing from).
        self.inferred_class = inferred_class
        self.fallback: ScalarNode | None = None
        self.flat = all(isinstance(node, ScalarNode) for node in children.values())
        """Every configured child is a scalar: list items can use the cached fast path."""

    def child(self, key: str, sample: Any) -> Node:
        """The node for ``key``; an unconfigured key gets the node inferred from the
        kind of ``sample`` (one node per key and kind, so documents never shape each
        other's rules)."""
        node = self.children.get(key)
        if node is not None:
            return node
        kind = value_kind(sample)
        node = self.extra.get((key, kind))
        if node is None:
            node = self.compiler.compile(
                infer_spec(kind),
                self.template + key_segment(key),
                discovered=not self.inferred_class,
                inferred_class=self.inferred_class,
            )
            self.extra[key, kind] = node
        return node

    def walk(
        self, expected: Any, predicted: Any, path: str, ppath: str | None, state: DocumentState
    ) -> Walk:
        """Compare an object; yields when a list below needs item similarities."""
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
            node = self.child(key, other if is_empty(value) and other is not None else value)
            segment = key_segment(key)
            child_ppath = ppath + segment if ppath else None
            if isinstance(node, ScalarNode):
                node.compare(value, other, path + segment, child_ppath, state)
            else:
                yield from node.walk(value, other, path + segment, child_ppath, state)

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

    def discovered_keys(self, items: Sequence[Any]) -> set[str]:
        """Keys of ``items`` that are not configured."""
        return (
            set().union(
                *(item.keys() for item in items if type(item) is dict or isinstance(item, Mapping))
            )
            - self.children.keys()
        )

    def item_columns(
        self, items: Sequence[Any], *, known_configured: bool = False
    ) -> list[tuple[str, bool, Node]]:
        """``(key, configured, node)`` for configured keys and keys found in ``items``.

        A discovered key's rule comes from the first non-empty value of that key in
        ``items`` (which are one list's expected then predicted items), so it depends
        on this list only.
        """
        columns: list[tuple[str, bool, Node]] = [
            (key, True, node) for key, node in self.children.items()
        ]
        if known_configured:
            return columns
        unknown = self.discovered_keys(items)
        if unknown:
            samples: dict[str, Any] = {}
            for item in items:
                if type(item) is dict or isinstance(item, Mapping):
                    for key, value in item.items():
                        if key in unknown and (key not in samples or is_empty(samples[key])):
                            samples[key] = value
            columns.extend((key, False, self.child(key, sample)) for key, sample in samples.items())
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

    def walk(
        self, expected: Any, predicted: Any, path: str, ppath: str | None, state: DocumentState
    ) -> Walk:
        """Pair and compare list items; yields to obtain the item similarities."""
        expected_list = _as_list(expected)
        if type(predicted) is WrongType or (
            not isinstance(predicted, list) and not is_empty(predicted)
        ):
            wrong = predicted if type(predicted) is WrongType else WrongType(predicted, "a list")
            yield from self._against_wrong(expected_list, wrong, path, state)
            return
        predicted_list: list[Any] = predicted if isinstance(predicted, list) else []
        expected_positions, expected_values = _non_empty(expected_list)
        predicted_positions, predicted_values = _non_empty(predicted_list)
        item = self.item
        block: Block | None = None
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
            pairs, block = yield (item, expected_values, predicted_values, self.match_threshold)
        if block is not None and block.fast:
            yield from _emit_fast_pairs(
                block,
                pairs,
                expected_positions,
                predicted_positions,
                expected_values,
                predicted_values,
                path,
                ppath,
                state,
            )
        for row, col in () if block is not None and block.fast else pairs:
            i, value = expected_positions[row], expected_values[row]
            j, other = predicted_positions[col], predicted_values[col]
            item_path = f"{path}[{i}]"
            item_ppath = f"{ppath}[{j}]" if ppath else None
            if block is not None and type(value) is dict and type(other) is dict:
                yield from _compare_paired_items(
                    block, block.columns, row, col, value, other, item_path, item_ppath, state
                )
            elif isinstance(item, ScalarNode):
                item.compare(value, other, item_path, item_ppath, state)
            else:
                yield from item.walk(value, other, item_path, item_ppath, state)
        paired_expected = {row for row, _ in pairs}
        paired_predicted = {col for _, col in pairs}
        for row, (i, value) in enumerate(zip(expected_positions, expected_values, strict=True)):
            if row not in paired_expected:
                item.one_sided(value, f"{path}[{i}]", None, state, True)
        extra = 0
        for col, (j, value) in enumerate(zip(predicted_positions, predicted_values, strict=True)):
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
            len(expected_values) - len(pairs),
            len(predicted_values) - len(pairs),
        )

    def _against_wrong(
        self, expected_list: list[Any], wrong: WrongType, path: str, state: DocumentState
    ) -> Walk:
        items = [(i, v) for i, v in enumerate(expected_list) if not is_empty(v)]
        for i, value in items:
            if isinstance(self.item, ScalarNode):
                self.item.compare(value, wrong, f"{path}[{i}]", None, state)
            else:
                yield from self.item.walk(value, wrong, f"{path}[{i}]", None, state)
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
    # The list's own template holds its item counts; the false alarm is an item-level
    # leaf, so it is counted under the item template.
    item = array.item
    assert isinstance(item, ObjectNode)
    node = item.compiler.compile(FieldSpec(method="EXACT"), array.template + "[]")
    assert isinstance(node, ScalarNode)
    return node


Node = ScalarNode | ObjectNode | ArrayNode


def _non_empty(items: list[Any]) -> tuple[Sequence[int], list[Any]]:
    """Positions and values of the non-empty items of a list."""
    if all(type(item) is dict and item for item in items):
        return range(len(items)), items
    positions = [index for index, item in enumerate(items) if not is_empty(item)]
    return positions, [items[index] for index in positions]


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
    """One attribute across every item of the lists being paired: values, presence,
    comparison keys (prepared once) and the flat pair scores, reused to score the
    attribute of each paired item."""

    __slots__ = (
        "configured",
        "expected_keys",
        "expected_present",
        "expected_values",
        "key",
        "node",
        "pair_codes",
        "pair_counts",
        "pair_scores",
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
        self.pair_codes: list[int] | None = None
        """Per paired item of every list in the batch: an outcome code (_TP, ...)."""
        self.pair_scores: list[float] = []
        self.pair_counts: list[list[int]] = []
        """Per list: ``[tp, fa, fd, fn, tn]`` over its paired items."""


class Block:
    """One list's view into a :class:`Column` set: where its items and pairs start."""

    __slots__ = (
        "columns",
        "expected_start",
        "fast",
        "matched_start",
        "pair_start",
        "predicted_start",
        "request",
        "width",
    )

    def __init__(
        self,
        columns: list[Column],
        expected_start: int,
        predicted_start: int,
        pair_start: int,
        width: int,
    ) -> None:
        self.columns = columns
        self.expected_start = expected_start
        self.predicted_start = predicted_start
        self.pair_start = pair_start
        self.width = width
        self.fast = False
        """Every item is a plain dict: paired items take :func:`_emit_fast_pairs`."""
        self.request = 0
        self.matched_start = 0


def item_similarity(
    node: ObjectNode, expected: list[Any], predicted: list[Any], threshold: float
) -> SimilarityResult:
    """Pairing of one list's items (see :func:`batch_item_similarity`)."""
    return batch_item_similarity([(node, expected, predicted, threshold)])[0]


def batch_item_similarity(requests: Sequence[SimilarityRequest]) -> list[SimilarityResult]:
    """``len(expected) x len(predicted)`` item similarities for lists of one item node.

    Similarity is the weighted mean, over the item's scalar attributes present on at
    least one side, of the attribute's score (0 where only one side has it); items
    with no such attribute on either side are fully similar. Nested objects and lists
    inside items do not take part in pairing; they are compared once items are paired.

    Vectorised: every (expected, predicted) item pair of every list is one element
    of flat arrays, and each attribute is scored for all pairs in one call
    (``Comparator.matrix`` for a single list, ``Comparator.pairwise`` for several).
    """
    every_key_configured = False
    if len(requests) > 1 and not requests[0][0].discovered_keys(
        [item for _, expected, predicted, _ in requests for item in (*expected, *predicted)]
    ):
        every_key_configured = True
    elif len(requests) > 1:
        # Lists whose items carry unconfigured keys are paired on their own, so that
        # the rules inferred for those keys come from that document alone.
        alone = [
            index
            for index, (node, expected, predicted, _) in enumerate(requests)
            if node.discovered_keys([*expected, *predicted])
        ]
        if alone:
            answers: dict[int, SimilarityResult] = {
                index: batch_item_similarity([requests[index]])[0] for index in alone
            }
            together = [index for index in range(len(requests)) if index not in answers]
            if together:
                batched = batch_item_similarity([requests[index] for index in together])
                answers.update(zip(together, batched, strict=True))
            return [answers[index] for index in range(len(requests))]
        every_key_configured = True
    node = requests[0][0]
    single = len(requests) == 1
    expected_all = [item for _, expected, _, _ in requests for item in expected]
    predicted_all = [item for _, _, predicted, _ in requests for item in predicted]
    m = [len(expected) for _, expected, _, _ in requests]
    n = [len(predicted) for _, _, predicted, _ in requests]
    pair_count = sum(rows * cols for rows, cols in zip(m, n, strict=True))
    if single:
        left_index = right_index = None
    else:
        m_array, n_array = np.array(m, dtype=np.int64), np.array(n, dtype=np.int64)
        counts = m_array * n_array
        owner = np.repeat(np.arange(len(requests)), counts)
        local = np.arange(pair_count) - (np.cumsum(counts) - counts)[owner]
        width = n_array[owner]
        left_index = (np.cumsum(m_array) - m_array)[owner] + local // width
        right_index = (np.cumsum(n_array) - n_array)[owner] + local % width

    total: Any = None
    weight_sum: Any = 0.0
    columns: list[Column] = []
    all_dicts = set(map(type, expected_all)) | set(map(type, predicted_all)) == {dict}
    for key, configured, child in node.item_columns(
        [*expected_all, *predicted_all], known_configured=every_key_configured
    ):
        column = Column(key, configured, child)
        columns.append(column)
        if all_dicts:
            column.expected_values = [item.get(key) for item in expected_all]
            column.predicted_values = [item.get(key) for item in predicted_all]
        else:
            column.expected_values = [_get(item, key) for item in expected_all]
            column.predicted_values = [_get(item, key) for item in predicted_all]
        if not isinstance(child, ScalarNode):
            continue
        comparator = child.comparator
        column.expected_present, column.expected_keys = comparator.prepare_many(
            column.expected_values
        )
        column.predicted_present, column.predicted_keys = comparator.prepare_many(
            column.predicted_values
        )
        all_left, all_right = all(column.expected_present), all(column.predicted_present)
        if not (all_left or all_right) and not (
            any(column.expected_present) or any(column.predicted_present)
        ):
            continue
        if left_index is None or right_index is None:
            scores = comparator.matrix(column.expected_keys, column.predicted_keys).ravel()
        else:
            scores = comparator.pairwise(
                column.expected_keys, column.predicted_keys, left_index, right_index
            )
        column.scores = scores
        weight = child.weight
        if all_left and all_right:
            # Every item has this attribute on both sides (the usual case): no masks.
            contribution = scores * weight if weight != 1.0 else scores
            weight_sum = weight_sum + weight
        else:
            left_present = np.array(column.expected_present, dtype=bool)
            right_present = np.array(column.predicted_present, dtype=bool)
            if left_index is None or right_index is None:
                left_pairs = np.repeat(left_present, n[0])
                right_pairs = np.tile(right_present, m[0])
            else:
                left_pairs, right_pairs = left_present[left_index], right_present[right_index]
            contribution = np.where(left_pairs & right_pairs, scores * weight, 0.0)
            weight_sum = weight_sum + weight * (left_pairs | right_pairs)
        total = contribution.copy() if total is None else total + contribution
    if total is None:
        similarity = np.ones(pair_count, dtype=np.float64)
    elif isinstance(weight_sum, float):
        similarity = total / weight_sum
    else:
        with np.errstate(invalid="ignore", divide="ignore"):
            similarity = np.where(
                weight_sum > 0, total / np.where(weight_sum > 0, weight_sum, 1.0), 1.0
            )

    results: list[SimilarityResult] = []
    expected_start = predicted_start = pair_start = matched = 0
    matched_left: list[int] = []
    matched_right: list[int] = []
    matched_pair: list[int] = []
    matched_owner: list[int] = []
    for index, ((_, expected, predicted, threshold), rows, cols) in enumerate(
        zip(requests, m, n, strict=True)
    ):
        block = Block(columns, expected_start, predicted_start, pair_start, cols)
        size = rows * cols
        pairs = _assign(similarity[pair_start : pair_start + size].reshape(rows, cols), threshold)
        if all(type(item) is dict for item in expected) and all(
            type(item) is dict for item in predicted
        ):
            block.fast = True
            block.request = index
            block.matched_start = matched
            for row, col in pairs:
                matched_left.append(expected_start + row)
                matched_right.append(predicted_start + col)
                matched_pair.append(pair_start + row * cols + col)
                matched_owner.append(index)
            matched += len(pairs)
        results.append((pairs, block))
        expected_start += rows
        predicted_start += cols
        pair_start += size
    if matched:
        _decide_matched(
            columns,
            np.array(matched_left, dtype=np.int64),
            np.array(matched_right, dtype=np.int64),
            np.array(matched_pair, dtype=np.int64),
            np.array(matched_owner, dtype=np.int64),
            len(requests),
        )
    return results


_TP, _FA, _FD, _FN, _TN, _FD_WRONG, _FA_WRONG = range(7)
_FAST_OUTCOMES = ("TP", "FA", "FD", "FN", "TN", "FD", "FA")
_FAST_REASONS: tuple[str | None, ...] = (
    None,
    "Predicted a value where none was expected",
    None,
    "Missing from the prediction",
    "Both empty",
    None,
    None,
)


def _decide_matched(
    columns: list[Column],
    left: Any,
    right: Any,
    pair: Any,
    owner: Any,
    request_count: int,
) -> None:
    """Outcomes of every configured scalar attribute of every paired item, at once.

    The rules of :meth:`ScalarNode.settle_unscored` and ``settle_scored``,
    vectorised: both empty TN, expected empty FA, predicted empty FN, a container
    where a value is due FD, otherwise TP or FD by score.
    """
    for column in columns:
        node = column.node
        if not column.configured or column.scores is None or not isinstance(node, ScalarNode):
            continue
        expected_present = np.array(column.expected_present, dtype=bool)[left]
        predicted_present = np.array(column.predicted_present, dtype=bool)[right]
        values = column.predicted_values
        scores = column.scores[pair]
        scored = np.where(scores >= node.comparator.threshold, _TP, _FD)
        alarm: Any = _FA
        kinds = set(map(type, values))
        if dict in kinds or list in kinds:
            container = np.array(
                [type(values[index]) in (dict, list) for index in right.tolist()], dtype=bool
            )
            scored = np.where(container, _FD_WRONG, scored)
            alarm = np.where(container, _FA_WRONG, _FA)
        codes = np.where(
            expected_present,
            np.where(predicted_present, scored, _FN),
            np.where(predicted_present, alarm, _TN),
        )
        cells = np.bincount(owner * 7 + codes, minlength=request_count * 7).reshape(-1, 7)
        cells[:, _FD] += cells[:, _FD_WRONG]
        cells[:, _FA] += cells[:, _FA_WRONG]
        column.pair_codes = codes.tolist()
        # The row's score: the comparator's for TP/FD, 0 for a container, none (NaN
        # here, None once the row is expanded) else.
        column.pair_scores = np.where(
            (codes == _TP) | (codes == _FD), scores, np.where(codes == _FD_WRONG, 0.0, np.nan)
        ).tolist()
        column.pair_counts = cells[:, :5].tolist()


def _emit_fast_pairs(
    block: Block,
    pairs: list[tuple[int, int]],
    expected_positions: Sequence[int],
    predicted_positions: Sequence[int],
    expected_values: list[Any],
    predicted_values: list[Any],
    path: str,
    ppath: str | None,
    state: DocumentState,
) -> Walk:
    """Count (and keep rows of) paired items whose outcomes were decided in bulk;
    attributes that were not (discovered, nested, never present) take the general
    path."""
    fast = [column for column in block.columns if column.pair_codes is not None]
    slow = [column for column in block.columns if column.pair_codes is None]
    if pairs:
        for column in fast:
            node = column.node
            assert isinstance(node, ScalarNode)
            cells = state.cells.get(node.template)
            if cells is None:
                cells = state.cells[node.template] = [0, 0, 0, 0, 0]
                state.nodes[node.template] = node
            for index, count in enumerate(column.pair_counts[block.request]):
                cells[index] += count
    keep = state.keep_rows
    confidence = state.confidence
    add_row = state.rows.append
    base = block.matched_start
    fast_data = [
        (
            column.segment,
            column.node,
            column.pair_codes,
            column.pair_scores,
            column.expected_values,
            column.predicted_values,
        )
        for column in fast
    ]
    for k, (row, col) in enumerate(pairs):
        at = base + k
        left = block.expected_start + row
        right = block.predicted_start + col
        item_path = f"{path}[{expected_positions[row]}]"
        item_ppath = f"{ppath}[{predicted_positions[col]}]" if ppath else None
        if keep:
            for segment, node, codes, scores, expected_column, predicted_column in fast_data:
                code = codes[at]  # type: ignore[index]
                other = predicted_column[right]
                add_row(
                    (
                        item_path + segment,
                        node,
                        expected_column[left],
                        other,
                        scores[at],
                        _FAST_OUTCOMES[code],
                        confidence.get(item_ppath + segment) if confidence and item_ppath else None,
                        _FAST_REASONS[code]
                        if code < _FD_WRONG
                        else WrongType(other, "a single value").reason(),
                    )
                )
        if slow:
            yield from _compare_paired_items(
                block,
                slow,
                row,
                col,
                expected_values[row],
                predicted_values[col],
                item_path,
                item_ppath,
                state,
            )


def _compare_paired_items(
    block: Block,
    columns: list[Column],
    row: int,
    col: int,
    expected: dict[str, Any],
    predicted: dict[str, Any],
    path: str,
    ppath: str | None,
    state: DocumentState,
) -> Walk:
    """Compare two paired items, reusing the scores computed for pairing."""
    left = block.expected_start + row
    right = block.predicted_start + col
    pair = block.pair_start + row * block.width + col
    for column in columns:
        key = column.key
        if not column.configured and key not in expected and key not in predicted:
            continue
        value = column.expected_values[left]
        other = column.predicted_values[right]
        child_path = path + column.segment
        child_ppath = ppath + column.segment if ppath else None
        node = column.node
        if not isinstance(node, ScalarNode):
            yield from node.walk(value, other, child_path, child_ppath, state)
        elif column.scores is None:
            node.compare(value, other, child_path, child_ppath, state)
        elif (
            # Both present and plain: the common case needs no emptiness re-check.
            column.expected_present[left]
            and column.predicted_present[right]
            and type(other) is not dict
            and type(other) is not list
        ) or not node.settle_unscored(value, other, child_path, child_ppath, state):
            node.settle_scored(
                value,
                other,
                column.expected_keys[left],
                column.predicted_keys[right],
                float(column.scores[pair]),
                child_path,
                child_ppath,
                state,
            )


def run_walk(walk: Walk) -> None:
    """Drive one document's walk, computing each list's similarity on request."""
    with gc_paused():
        try:
            request = next(walk)
            while True:
                request = walk.send(item_similarity(*request))
        except StopIteration:
            return


def run_walks(walks: Sequence[Walk]) -> None:
    """Drive many documents' walks together.

    Whenever every walk is waiting on a list, the requests for the same list node are
    answered by one vectorised computation over all their item pairs
    (:func:`batch_item_similarity`), which is what makes small documents fast.
    """
    active: list[tuple[Walk, SimilarityRequest]] = []
    for walk in walks:
        request = _advance(walk, None)
        if request is not None:
            active.append((walk, request))
    while active:
        groups: dict[int, list[tuple[Walk, SimilarityRequest]]] = {}
        for entry in active:
            groups.setdefault(id(entry[1][0]), []).append(entry)
        active = []
        for group in groups.values():
            results = batch_item_similarity([request for _, request in group])
            for (walk, _), result in zip(group, results, strict=True):
                request = _advance(walk, result)
                if request is not None:
                    active.append((walk, request))


def _advance(walk: Walk, value: SimilarityResult | None) -> SimilarityRequest | None:
    try:
        return next(walk) if value is None else walk.send(value)
    except StopIteration:
        return None


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
    if score is not None and score != score:  # NaN: rows decided in bulk had no score
        score = None
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
