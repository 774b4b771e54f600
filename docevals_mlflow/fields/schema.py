"""Document schemas: which comparison method decides each field.

A schema has document classes; a class has fields; a field is a *scalar* (a rule:
method and threshold), an *object* (named sub-fields, the IDP "group") or an *array*
(an item spec plus the list's match threshold, the IDP "list").

The native format, in YAML or JSON::

    schema_id: bank-statements
    version: "1"
    classes:
      - name: Bank Statement
        fields:
          Account Number: {method: EXACT}
          Statement Period: {method: FUZZY, threshold: 0.8}
          Account Holder Address:
            fields:
              City: {method: FUZZY, threshold: 0.9}
              State: {method: EXACT}
          Transactions:
            match_threshold: 0.7
            items:
              fields:
                Date: {method: DATE}
                Amount: {method: NUMERIC_EXACT, threshold: 0.01}
          Tags:
            items: {method: EXACT}

Importers for the IDP configuration format and for JSON Schema with evaluation
extensions live in :mod:`docevals_mlflow.fields.importers`. The methods themselves
(built in, or from plugins) are records of :mod:`docevals_mlflow.fields.registry`:
``method`` accepts every registered name, and a method's options are checked against
its record.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import (
    Field,
    model_validator,
)

from docevals_mlflow.core.fingerprints import sha256_json
from docevals_mlflow.core.model import FrozenModel
from docevals_mlflow.core.paths import key_segment
from docevals_mlflow.errors import InputError
from docevals_mlflow.fields import registry
from docevals_mlflow.fields.field_spec import (
    DEFAULT_MATCH_THRESHOLD,
    DEFAULT_THRESHOLDS,
    LIST_PAIRINGS,
    METHODS,
    DateOrder,
    FieldSpec,
    FuzzyScorer,
    ListPairing,
    Method,
)
from docevals_mlflow.fields.registry import (
    BUILTIN_NAMES,
    FieldMethod,
)


class ClassSchema(FrozenModel):
    """The fields of one document class."""

    name: str = Field(min_length=1)
    description: str | None = None
    fields: dict[str, FieldSpec] = Field(default_factory=dict)


def _walk_methods(spec: FieldSpec, path: str, found: list[tuple[str, str]]) -> None:
    if spec.fields is not None:
        for name, child in spec.fields.items():
            _walk_methods(child, path + key_segment(name), found)
    elif spec.items is not None:
        _walk_methods(spec.items, f"{path}[]", found)
    elif spec.method is not None:
        found.append((path, spec.method))


class DocumentSchema(FrozenModel):
    """Comparison rules for every document class.

    ``default_class`` names the class used for documents that carry no class (a
    schema with one class uses it for them anyway). A document whose class the
    schema does not know is compared by inferred rules, as is every document of a
    schema with no classes at all.
    """

    schema_id: str = Field(default="schema", min_length=1)
    version: str = "1"
    description: str | None = None
    classes: list[ClassSchema] = Field(default_factory=list)
    default_class: str | None = None

    @model_validator(mode="after")
    def _unique_classes(self) -> DocumentSchema:
        names = [schema_class.name for schema_class in self.classes]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise ValueError(f"duplicate class names: {', '.join(duplicates)}")
        if self.default_class is not None and self.default_class not in names:
            raise ValueError(
                f"default_class {self.default_class!r} is not one of the classes "
                f"({', '.join(names) or 'none'})"
            )
        return self

    @property
    def sha256(self) -> str:
        """Fingerprint of the schema: the canonical JSON of its full definition, and,
        when it uses plugin methods, their packages and versions (so that upgrading a
        plugin changes the fingerprint). A schema of built-in methods hashes its
        definition alone, as it always has."""
        methods = self.plugin_methods()
        if not methods:
            return sha256_json(self)
        return sha256_json(
            {
                "schema": self,
                "methods": {name: method.provenance() for name, method in methods.items()},
            }
        )

    def plugin_methods(self) -> dict[str, FieldMethod]:
        """The plugin methods (not built in) this schema uses, by name in order.

        Raises:
            ConfigurationError: a method no installed or registered plugin provides
                (a schema unpickled where the plugin is missing).
        """
        names = sorted(
            {method for _, _, method in self.methods_used() if method not in BUILTIN_NAMES}
        )
        return {name: registry.get_field_method(name) for name in names}

    def class_schema(self, name: str | None) -> ClassSchema | None:
        """The class called ``name`` (or the default class when ``name`` is None)."""
        wanted = name if name is not None else self.default_class
        if wanted is None and len(self.classes) == 1:
            return self.classes[0]
        for schema_class in self.classes:
            if schema_class.name == wanted:
                return schema_class
        return None

    def methods_used(self) -> list[tuple[str, str, str]]:
        """``(class, field template, method)`` for every configured scalar method."""
        used: list[tuple[str, str, str]] = []
        for schema_class in self.classes:
            found: list[tuple[str, str]] = []
            for name, spec in schema_class.fields.items():
                _walk_methods(spec, "$" + key_segment(name), found)
            used.extend((schema_class.name, path, method) for path, method in found)
        return used

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str | None = None) -> DocumentSchema:
        """Build a schema from its native dict form, detecting the IDP and JSON-Schema forms.

        A dict with ``classes`` whose entries have ``attributes`` is read as an IDP
        configuration; a dict with ``properties``/``$schema`` (or a ``classes`` list of
        such dicts) as JSON Schema; anything else as the native format.
        """
        from docevals_mlflow.fields import importers

        try:
            if importers.looks_like_idp_config(data):
                return importers.schema_from_idp_config(data)
            if importers.looks_like_json_schema(data):
                return importers.schema_from_json_schema(data)
            return cls.model_validate(data)
        except InputError as exc:
            raise exc.located(source=source, record=_class_at(exc.path, data)) from None

    @classmethod
    def from_idp_config(cls, config: Mapping[str, Any]) -> DocumentSchema:
        """Import the IDP configuration format (classes → attributes)."""
        from docevals_mlflow.fields.importers import schema_from_idp_config

        return schema_from_idp_config(config)

    @classmethod
    def from_json_schema(cls, schema: Mapping[str, Any]) -> DocumentSchema:
        """Import JSON Schema with ``x-aws-idp-evaluation-*`` / ``x-aws-stickler-*``."""
        from docevals_mlflow.fields.importers import schema_from_json_schema

        return schema_from_json_schema(schema)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> DocumentSchema:
        """Read a schema file (``.json``, ``.yaml``, ``.yml``) in any supported form."""
        from docevals_mlflow.core.datafiles import load_data_file

        file_path = Path(path)
        data = load_data_file(file_path)
        if not isinstance(data, Mapping):
            raise InputError("a schema file must hold an object", source=str(file_path))
        return cls.from_dict(data, source=str(file_path))


def _class_at(path: str | None, data: Mapping[str, Any]) -> str | None:
    """The class an error path such as ``classes[1].fields.x`` points into."""
    match = re.match(r"classes\[(\d+)\]", path or "")
    classes = data.get("classes")
    if not match or not isinstance(classes, list) or int(match.group(1)) >= len(classes):
        return None
    entry = classes[int(match.group(1))]
    name = entry.get("name") if isinstance(entry, Mapping) else None
    return f"class {name!r}" if name else f"class #{int(match.group(1)) + 1}"


__all__ = [
    "DEFAULT_MATCH_THRESHOLD",
    "DEFAULT_THRESHOLDS",
    "LIST_PAIRINGS",
    "METHODS",
    "ClassSchema",
    "DateOrder",
    "DocumentSchema",
    "FieldSpec",
    "FuzzyScorer",
    "ListPairing",
    "Method",
]
