"""Objects (IDP groups): configured children plus keys discovered in the data."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from docevals_mlflow.core.paths import key_segment
from docevals_mlflow.core.values import is_empty
from docevals_mlflow.fields.leaves import ScalarNode
from docevals_mlflow.fields.methods import infer_spec, value_kind
from docevals_mlflow.fields.schema import FieldSpec
from docevals_mlflow.fields.state import DocumentState, Walk, WrongType

if TYPE_CHECKING:
    from docevals_mlflow.fields.compiler import SchemaCompiler
    from docevals_mlflow.fields.state import Node

_EMPTY_MAP: Mapping[str, Any] = {}
_ONLY_DICT = frozenset({dict})


class ObjectNode:
    """An object (IDP group): configured children plus keys discovered in the data.

    Configured children are always compared (absent on both sides they are TN);
    discovered ones only where a document has them.
    """

    __slots__ = (
        "children",
        "compiler",
        "configured",
        "extra",
        "fallback",
        "flat",
        "inferred_class",
        "segments",
        "template",
        "weight",
    )

    def __init__(
        self,
        template: str,
        children: dict[str, Node],
        compiler: SchemaCompiler,
        *,
        inferred_class: bool,
        configured: bool = True,
        weight: float = 1.0,
    ) -> None:
        self.template = template
        self.segments = {key: key_segment(key) for key in children}
        """Path segments of the configured keys, made once."""
        self.weight = weight
        """The object's weight in the similarity of the list items holding it."""
        self.configured = configured
        """From the schema: ground truth other than an object here is an input error."""
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
        elif self.configured:
            state.violation(path, "an object", expected)
            return
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
        children, segments = self.children, self.segments
        for key in self._keys(expected_map, predicted_map):
            value = expected_map.get(key)
            other = predicted_map.get(key) if predicted_map is not None else wrong
            node = children.get(key)
            if node is None:
                node = self.child(key, other if is_empty(value) and other is not None else value)
                segment = key_segment(key)
            else:
                segment = segments[key]
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
            if is_empty(value):
                return
            if expected_side and self.configured:
                state.violation(path, "an object", value)
                return
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

    def weak_pair(
        self,
        expected: Any,
        predicted: Any,
        path: str,
        ppath: str | None,
        state: DocumentState,
        reason: str,
    ) -> None:
        """The leaves of two items paired below the match threshold (Stickler 1.0's
        weak pair): FD where both hold a value, FN / FA where one does. Lists inside
        are not paired: their items are all missed and all extra."""
        if not isinstance(expected, Mapping):
            if not is_empty(expected):
                if self.configured:
                    state.violation(path, "an object", expected)
                    return
                self._shape_mismatch(expected, None, path, None, state)
            expected = _EMPTY_MAP
        if not isinstance(predicted, Mapping):
            # A predicted item of another shape: everything expected is missing from
            # it, and it is one false alarm itself.
            self.one_sided(expected, path, None, state, True)
            self.one_sided(predicted, path, ppath, state, False)
            return
        for key in self._keys(expected, predicted):
            value = expected.get(key)
            other = predicted.get(key)
            node = self.child(key, other if is_empty(value) and other is not None else value)
            segment = key_segment(key)
            child_path = path + segment
            child_ppath = ppath + segment if ppath else None
            if isinstance(node, ScalarNode):
                node.weak_leaf(value, other, child_path, child_ppath, state, reason)
            elif isinstance(node, ObjectNode):
                node.weak_pair(value, other, child_path, child_ppath, state, reason)
            else:
                node.one_sided(value, child_path, None, state, True)
                node.one_sided(other, child_path, child_ppath, state, False)

    def discovered_keys(self, items: Sequence[Any]) -> set[str]:
        """Keys of ``items`` that are not configured."""
        if _ONLY_DICT.issuperset(map(type, items)):
            found: set[str] = set().union(*map(dict.keys, items))
        else:
            found = set().union(
                *(item.keys() for item in items if type(item) is dict or isinstance(item, Mapping))
            )
        return found - self.children.keys()

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
