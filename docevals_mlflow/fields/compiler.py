"""Compiling a schema into comparison nodes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from docevals_mlflow.core.paths import key_segment
from docevals_mlflow.fields.leaves import DISCOVERED_NOTE, ScalarNode
from docevals_mlflow.fields.lists import ArrayNode
from docevals_mlflow.fields.methods import ProviderFactory, make_comparator
from docevals_mlflow.fields.objects import ObjectNode
from docevals_mlflow.fields.schema import ClassSchema, FieldSpec, ListPairing

if TYPE_CHECKING:
    from docevals_mlflow.fields.state import Node


class SchemaCompiler:
    """Turns field specs into nodes, building comparators once."""

    def __init__(
        self,
        providers: Mapping[str, ProviderFactory] | None = None,
        *,
        list_pairing: ListPairing | None = None,
    ) -> None:
        self.providers = providers
        self.list_pairing = list_pairing
        """Overrides every list's own ``pairing`` when set (``--list-pairing``)."""

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
            return ObjectNode(
                template,
                children,
                self,
                inferred_class=inferred_class,
                configured=not (discovered or inferred_class),
                weight=spec.weight,
            )
        if spec.items is not None:
            item = self.compile(
                spec.items, template + "[]", discovered=discovered, inferred_class=inferred_class
            )
            node = ArrayNode(
                template,
                item,
                spec.match_threshold,
                self.list_pairing or spec.pairing,
                configured=not (discovered or inferred_class),
                discovered=discovered,
                weight=spec.weight,
            )
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
            configured=not (discovered or inferred_class),
        )

    def compile_class(self, schema_class: ClassSchema | None) -> ObjectNode:
        """The root node of a document class (an unconfigured class discovers all)."""
        fields = schema_class.fields if schema_class is not None else {}
        root = self.compile(
            FieldSpec(fields=dict(fields)), "$", inferred_class=schema_class is None
        )
        assert isinstance(root, ObjectNode)
        return root
