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
extensions live in :mod:`docevals_mlflow.fields.importers`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from docevals_mlflow.core.fingerprints import sha256_json
from docevals_mlflow.core.model import FrozenModel, Number
from docevals_mlflow.core.paths import key_segment
from docevals_mlflow.errors import InputError

Method = Literal[
    "EXACT",
    "NORMALIZED",
    "NUMERIC_EXACT",
    "FUZZY",
    "LEVENSHTEIN",
    "DATE",
    "SEMANTIC",
    "LLM",
]
"""Methods that compare two scalar values. ``HUNGARIAN`` is a list method: a field
with ``items`` is matched with it, and for lists of scalars the items' method is the
comparator."""

METHODS: tuple[str, ...] = (
    "EXACT",
    "NORMALIZED",
    "NUMERIC_EXACT",
    "FUZZY",
    "LEVENSHTEIN",
    "DATE",
    "SEMANTIC",
    "LLM",
)

FuzzyScorer = Literal["ratio", "partial_ratio", "token_sort_ratio", "token_set_ratio"]
DateOrder = Literal["month_first", "day_first"]

DEFAULT_THRESHOLDS: dict[str, float] = {
    "EXACT": 1.0,
    "NORMALIZED": 1.0,
    "NUMERIC_EXACT": 0.0,  # an absolute tolerance, as in the IDP format
    "FUZZY": 0.7,
    "LEVENSHTEIN": 0.7,
    "DATE": 1.0,
    "SEMANTIC": 0.7,
    "LLM": 0.5,
}
DEFAULT_MATCH_THRESHOLD = 0.5
"""Paired list items whose similarity reaches this are the same item (matched);
below it they are a weak pair (``pairing: stickler``) or not paired at all
(``pairing: strict``). Similarity is the mean of the item's attribute scores, so 0.5
matches items that agree on most attributes and then counts the attributes that
differ as wrong values (FD), which is what a reader expects of "the transaction was
found but its amount is wrong". Stickler's own default is 0.7 (docs/differences.md)."""

ListPairing = Literal["stickler", "strict"]
"""How list items are paired.

``stickler`` (the default, as Stickler 1.0): the optimal assignment always pairs
min(m, n) items; a pair below the threshold is a *weak* pair, one FD at item level,
its attributes FD where both sides have a value (FN / FA where one side has it).
``strict``: only pairs at or above the threshold are pairs; the items of a weak pair
are left unpaired, their attributes FN and FA."""
LIST_PAIRINGS: tuple[str, ...] = ("stickler", "strict")


_METHOD_OPTIONS: dict[str, tuple[str, ...]] = {
    "fuzzy_scorer": ("FUZZY",),
    "date_order": ("DATE",),
    "relative_tolerance": ("NUMERIC_EXACT",),
    "case_sensitive": ("EXACT", "NORMALIZED"),
}
"""The options only some methods read."""


class FieldSpec(FrozenModel):
    """How one field is compared.

    Exactly one shape applies: ``fields`` makes an object (group), ``items`` makes an
    array (list), otherwise the field is a scalar decided by ``method``.

    For scalars, ``threshold`` is the inclusive score threshold (0..1) for a match,
    except for ``NUMERIC_EXACT`` where it is the absolute tolerance. For arrays,
    ``match_threshold`` is the item similarity a pair needs to be the same item, and
    ``pairing`` what becomes of pairs below it (see :data:`ListPairing`).
    """

    method: Method | None = None
    threshold: Number | None = Field(default=None, ge=0)
    fuzzy_scorer: FuzzyScorer = "ratio"
    case_sensitive: bool | None = None
    date_order: DateOrder = "month_first"
    relative_tolerance: Number = Field(default=0.0, ge=0)
    fields: dict[str, FieldSpec] | None = None
    items: FieldSpec | None = None
    match_threshold: Number = Field(default=DEFAULT_MATCH_THRESHOLD, ge=0, le=1)
    pairing: ListPairing = "stickler"
    weight: Number = Field(default=1.0, gt=0)
    description: str | None = None

    @model_validator(mode="after")
    def _one_shape(self) -> FieldSpec:
        if self.fields is not None and self.items is not None:
            raise ValueError("a field is an object ('fields') or an array ('items'), not both")
        if (self.fields is not None or self.items is not None) and self.method is not None:
            shape = "object" if self.fields is not None else "array"
            raise ValueError(
                f"'method' applies to scalar fields; this is an {shape} "
                "(for lists of scalars, put the method on 'items')"
            )
        method = self.effective_method
        if (
            self.kind == "scalar"
            and method != "NUMERIC_EXACT"
            and self.threshold is not None
            and self.threshold > 1
        ):
            raise ValueError(f"threshold {self.threshold} for {method} must be in [0, 1]")
        self._check_options_apply(method)
        return self

    def _check_options_apply(self, method: str) -> None:
        # A setting the comparator never reads is a mistake the user should hear about
        # (date_order on a FUZZY field does nothing), not a silent no-op, even when
        # its value happens to be the default: `fuzzy_scorer: ratio` on a DATE field
        # says the writer expects fuzzy matching. Only a field written out in full
        # (a schema dumped and read back, every option present) carries defaults that
        # are not settings.
        fields = type(self).model_fields
        given = set(self.model_fields_set)
        if given >= _OPTIONS_OF_A_DUMP:
            given = {
                name
                for name in given
                if getattr(self, name) != fields[name].get_default(call_default_factory=True)
            }
        if self.kind == "scalar":
            wrong = [
                f"'{option}' applies to {' and '.join(methods)} fields only"
                for option, methods in _METHOD_OPTIONS.items()
                if option in given and method not in methods
            ]
            wrong.extend(
                f"'{option}' applies to lists ('items') only"
                for option in ("match_threshold", "pairing")
                if option in given
            )
        else:
            wrong = [
                f"'{option}' applies to scalar fields only (put it on the scalar fields inside)"
                for option in _METHOD_OPTIONS
                if option in given
            ]
            if self.kind == "object":
                wrong.extend(
                    f"'{option}' applies to lists ('items') only"
                    for option in ("match_threshold", "pairing")
                    if option in given
                )
        if wrong:
            raise ValueError(f"{'; '.join(wrong)} (this field: {self._described(method)})")

    def _described(self, method: str) -> str:
        return f"method {method}" if self.kind == "scalar" else f"an {self.kind}"

    @property
    def kind(self) -> Literal["scalar", "object", "array"]:
        """``object``, ``array`` or ``scalar``."""
        if self.fields is not None:
            return "object"
        if self.items is not None:
            return "array"
        return "scalar"

    @property
    def effective_method(self) -> str:
        """The scalar method, defaulting to ``EXACT``."""
        return self.method or "EXACT"

    @property
    def effective_threshold(self) -> float:
        """The threshold, defaulting per method (see ``DEFAULT_THRESHOLDS``)."""
        if self.threshold is not None:
            return self.threshold
        return DEFAULT_THRESHOLDS[self.effective_method]


_OPTIONS_OF_A_DUMP = frozenset(
    name for name, info in FieldSpec.model_fields.items() if info.default is not None
)
"""The options every dump of a field writes, even ``exclude_none`` ones: a field that
gives them all was written out in full rather than by hand."""


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
        """Fingerprint of the schema (canonical JSON of its full definition)."""
        return sha256_json(self)

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
