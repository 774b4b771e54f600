"""PyYAML's safe loader with the limits of :mod:`docevals_mlflow.core.refusals`.

Imported only when a YAML file is read, so that reading JSON never imports PyYAML.
Nesting, aliases (a "billion laughs" file is refused instead of expanding forever),
an alias inside the node it names, lone surrogates, repeated keys, non-finite floats
and integers too long to read are refused with the line, column and field path.
"""

from __future__ import annotations

import math
import re
import sys
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.composer import ComposerError
from yaml.events import (
    AliasEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
)
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from docevals_mlflow.core.paths import FieldPath
from docevals_mlflow.core.refusals import MAX_NESTING, YAML_ALIAS_NODES, Refusal

_SURROGATE_CHARACTER = re.compile("[\ud800-\udfff]")


def _refusal(message: str, mark: Any, path: FieldPath, expected: str | None) -> Refusal:
    return Refusal(message, path, line=mark.line + 1, column=mark.column + 1, expected=expected)


@dataclass
class _Open:
    """A mapping or sequence being composed, with the nodes it holds so far."""

    node: MappingNode | SequenceNode
    anchor: str | None
    size: int = 1
    key: Node | None = None


def _path_of(stack: list[_Open]) -> FieldPath:
    segments: list[str | int] = []
    for frame in stack:
        if isinstance(frame.node, SequenceNode):
            segments.append(len(frame.node.value))
        elif isinstance(frame.key, ScalarNode):
            segments.append(str(frame.key.value))
        else:
            break
    return tuple(segments)


class BoundedLoader(yaml.SafeLoader):
    """A safe loader that composes iteratively and refuses what the limits refuse."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._sizes: dict[str, int] = {}
        self._open: set[str] = set()
        self._repeated = 0

    def compose_node(self, parent: Node | None, index: int) -> Node | None:
        # Iterative, unlike PyYAML's own: nesting costs no Python stack, so the
        # depth limit (not the interpreter's recursion limit) decides what is
        # too deep. Path resolvers are not supported (safe loading has none).
        loader: Any = self  # PyYAML's stubs leave the event methods untyped
        stack: list[_Open] = []
        while True:
            node: Node
            if stack and loader.check_event(SequenceEndEvent, MappingEndEvent):
                node, size = self._close(stack.pop(), loader.get_event())
            else:
                event = loader.get_event()
                if isinstance(event, AliasEvent):
                    node, size = self._alias(event, stack)
                elif isinstance(event, ScalarEvent):
                    node, size = self._scalar(event, stack), 1
                else:
                    stack.append(self._open_collection(event, stack))
                    continue
            if not stack:
                return node
            # Inline (not a helper): this runs once per node, the loader's hot path.
            frame = stack[-1]
            frame.size += size
            if isinstance(frame.node, SequenceNode):
                frame.node.value.append(node)
            elif frame.key is None:
                frame.key = node
            else:
                frame.node.value.append((frame.key, node))
                frame.key = None

    def _close(self, frame: _Open, end: Any) -> tuple[Node, int]:
        frame.node.end_mark = end.end_mark
        if frame.anchor is not None:
            self._sizes[frame.anchor] = frame.size
            self._open.discard(frame.anchor)
        return frame.node, frame.size

    def _alias(self, event: Any, stack: list[_Open]) -> tuple[Node, int]:
        anchor = event.anchor
        mark: Any = event.start_mark  # the stubs' two Mark classes disagree
        if anchor not in self.anchors:
            raise ComposerError(None, None, f"found undefined alias {anchor!r}", mark)
        if anchor in self._open:
            raise _refusal(
                f"alias *{anchor} inside the node it names (a cycle)",
                mark,
                _path_of(stack),
                "aliases to nodes that are complete",
            )
        size = self._sizes[anchor]
        self._repeated += size
        if self._repeated > YAML_ALIAS_NODES:
            raise _refusal(
                f"aliases repeat more than {YAML_ALIAS_NODES:,} nodes",
                mark,
                _path_of(stack),
                "fewer or smaller aliases (this looks like an alias bomb)",
            )
        return self.anchors[anchor], size

    def _check_new_anchor(self, anchor: str | None, mark: Any) -> None:
        if anchor is not None and anchor in self.anchors:
            first = self.anchors[anchor].start_mark
            raise ComposerError(
                None,
                None,
                f"anchor &{anchor} defined twice (first at line "
                f"{first.line + 1 if first else '?'})",
                mark,
            )

    def _scalar(self, event: Any, stack: list[_Open]) -> Node:
        anchor = event.anchor
        mark: Any = event.start_mark
        self._check_new_anchor(anchor, mark)
        if _SURROGATE_CHARACTER.search(event.value):
            raise _refusal(
                "a lone UTF-16 surrogate (half of a character) in a string",
                mark,
                _path_of(stack),
                "characters, not halves of surrogate pairs",
            )
        tag = event.tag
        if tag is None or tag == "!":
            tag = self.resolve(ScalarNode, event.value, event.implicit)  # type: ignore[no-untyped-call]
        node = ScalarNode(tag, event.value, mark, event.end_mark, event.style)
        if anchor is not None:
            self.anchors[anchor] = node
            self._sizes[anchor] = 1
        return node

    def _open_collection(self, event: Any, stack: list[_Open]) -> _Open:
        anchor = event.anchor
        mark: Any = event.start_mark
        self._check_new_anchor(anchor, mark)
        if len(stack) >= MAX_NESTING:
            raise _refusal(
                f"nesting deeper than {MAX_NESTING:,} levels",
                mark,
                _path_of(stack),
                f"mappings and sequences nested at most {MAX_NESTING:,} deep",
            )
        collection = MappingNode if isinstance(event, MappingStartEvent) else SequenceNode
        tag = event.tag
        if tag is None or tag == "!":
            tag = self.resolve(collection, None, event.implicit)  # type: ignore[no-untyped-call]
        opened = collection(tag, [], mark, None, flow_style=event.flow_style)
        if anchor is not None:
            self.anchors[anchor] = opened
            self._open.add(anchor)
        return _Open(opened, anchor)

    def compose_document(self) -> Node | None:
        node = super().compose_document()
        self._sizes, self._open = {}, set()
        return node

    def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, MappingNode):
            # PyYAML keeps the last of repeated keys; merged keys (<<) may be
            # overridden on purpose, so only the mapping's own keys are checked.
            seen: set[Any] = set()
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=False)
                try:
                    repeated = key in seen
                except TypeError:  # unhashable: PyYAML's own error follows
                    continue
                if repeated:
                    raise _refusal(
                        f"duplicate key {key!r}",
                        key_node.start_mark,
                        (),
                        "each key once per mapping",
                    )
                seen.add(key)
        return dict(super().construct_mapping(node, deep=deep))

    def construct_yaml_float(self, node: Any) -> float:
        number = float(super().construct_yaml_float(node))
        if not math.isfinite(number):
            raise _refusal(
                f"{node.value} is not a finite number", node.start_mark, (), "finite numbers"
            )
        return number

    def construct_yaml_int(self, node: Any) -> int:
        try:
            return int(super().construct_yaml_int(node))
        except ValueError:
            raise _refusal(
                f"an integer of {len(node.value):,} digits is too long to read",
                node.start_mark,
                (),
                f"integers of at most {sys.get_int_max_str_digits():,} digits",
            ) from None


BoundedLoader.add_constructor("tag:yaml.org,2002:float", BoundedLoader.construct_yaml_float)
BoundedLoader.add_constructor("tag:yaml.org,2002:int", BoundedLoader.construct_yaml_int)
