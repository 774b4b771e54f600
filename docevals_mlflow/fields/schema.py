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
from typing import Any, Literal

from pydantic import (
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)
from pydantic_core import PydanticCustomError

from docevals_mlflow.core.fingerprints import canonical_json, sha256_json
from docevals_mlflow.core.model import FrozenModel, Number
from docevals_mlflow.core.paths import key_segment
from docevals_mlflow.errors import ConfigurationError, InputError
from docevals_mlflow.fields import registry
from docevals_mlflow.fields.registry import (
    BUILTIN_METHODS,
    BUILTIN_NAMES,
    BUILTIN_OPTIONS,
    FieldMethod,
    names_text,
)

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
"""The built-in methods that compare two scalar values, for type hints. A schema
accepts every registered method, plugins' included
(:func:`~docevals_mlflow.fields.registry.field_method_names`). ``HUNGARIAN`` is a list
method: a field with ``items`` is matched with it, and for lists of scalars the items'
method is the comparator."""

METHODS: tuple[str, ...] = tuple(method.name for method in BUILTIN_METHODS)
"""The built-in method names, in order (plugins add theirs to
:func:`~docevals_mlflow.fields.registry.field_method_names`)."""

FuzzyScorer = Literal["ratio", "partial_ratio", "token_sort_ratio", "token_set_ratio"]
DateOrder = Literal["month_first", "day_first"]

DEFAULT_THRESHOLDS: dict[str, float] = {
    method.name: method.default_threshold for method in BUILTIN_METHODS
}
"""The built-in methods' default thresholds (any method's: ``FieldMethod.default_threshold``)."""
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


class FieldSpec(FrozenModel):
    """How one field is compared.

    Exactly one shape applies: ``fields`` makes an object (group), ``items`` makes an
    array (list), otherwise the field is a scalar decided by ``method``.

    For scalars, ``threshold`` is the inclusive score threshold (0..1) for a match,
    except for methods whose threshold is a tolerance (``NUMERIC_EXACT``: the absolute
    tolerance). For arrays, ``match_threshold`` is the item similarity a pair needs to
    be the same item, and ``pairing`` what becomes of pairs below it (see
    :data:`ListPairing`).

    A plugin method's options are written next to ``method`` like the built-in ones
    (``{method: JACCARD, min_length: 2}``); they are kept in ``method_options`` and
    read with :meth:`option`.
    """

    method: str | None = None
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
    method_options: dict[str, Any] | None = Field(default=None, exclude=True)
    """The options of a plugin method that are not attributes of their own, as given
    (validated by the method); dumps write them next to ``method``."""

    @model_validator(mode="before")
    @classmethod
    def _gather_method_options(cls, data: Any) -> Any:
        # Plugin options are written flat, like the built-in ones, and set apart here so
        # that every other unknown key (a typo) still meets the model's own refusal.
        if not isinstance(data, dict) or _SPEC_KEYS.issuperset(data):
            return data
        if "method_options" in data:
            raise ValueError(
                "'method_options' is not a schema key: write a method's options next to 'method'"
            )
        known = registry.plugin_option_names()
        options = {key: value for key, value in data.items() if key in known}
        if not options:
            return data
        gathered = {key: value for key, value in data.items() if key not in options}
        gathered["method_options"] = options
        return gathered

    @field_validator("method", mode="plain")
    @classmethod
    def _registered_method(cls, value: Any) -> str | None:
        if value is None:
            return None
        if isinstance(value, str) and (
            value in BUILTIN_NAMES or registry.find_field_method(value) is not None
        ):
            return value
        # Worded as pydantic words a Literal, which this field was before plugins.
        raise PydanticCustomError(
            "literal_error",
            "Input should be {expected}",
            {"expected": _alternatives(registry.field_method_names())},
        )

    @model_serializer(mode="wrap")
    def _flat_method_options(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if self.method_options and isinstance(data, dict):
            data.update(self.method_options)
        return data

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
        record = registry.get_field_method(method) if self.kind == "scalar" else None
        if (
            record is not None
            and record.threshold_kind == "score"
            and self.threshold is not None
            and self.threshold > 1
        ):
            raise ValueError(f"threshold {self.threshold} for {method} must be in [0, 1]")
        self._check_options_apply(method, record)
        return self

    def _check_options_apply(self, method: str, record: FieldMethod | None) -> None:
        # A setting the comparator never reads is a mistake the user should hear about
        # (date_order on a FUZZY field does nothing), not a silent no-op, even when
        # its value happens to be the default: `fuzzy_scorer: ratio` on a DATE field
        # says the writer expects fuzzy matching. Only a field written out in full
        # (a schema dumped and read back, every option present) carries defaults that
        # are not settings.
        fields = type(self).model_fields
        given = set(self.model_fields_set) - {"method_options"}
        if given >= _OPTIONS_OF_A_DUMP:
            given = {
                name
                for name in given
                if getattr(self, name) != fields[name].get_default(call_default_factory=True)
            }
        options = [option for option in BUILTIN_OPTIONS if option in given]
        options.extend(self.method_options or ())
        if record is not None:
            wrong = [
                f"'{option}' applies to {names_text(registry.option_readers(option))} fields only"
                for option in options
                if not record.reads(option)
            ]
            if not wrong:
                wrong.extend(self._check_option_values(record))
            wrong.extend(
                f"'{option}' applies to lists ('items') only"
                for option in ("match_threshold", "pairing")
                if option in given
            )
        else:
            wrong = [
                f"'{option}' applies to scalar fields only (put it on the scalar fields inside)"
                for option in options
            ]
            if self.kind == "object":
                wrong.extend(
                    f"'{option}' applies to lists ('items') only"
                    for option in ("match_threshold", "pairing")
                    if option in given
                )
        if wrong:
            raise ValueError(f"{'; '.join(wrong)} (this field: {self._described(method)})")

    def _check_option_values(self, record: FieldMethod) -> list[str]:
        """Validate the plugin options given (keeping what the validators return)."""
        if not self.method_options:
            return []
        wrong: list[str] = []
        kept: dict[str, Any] = {}
        for name, value in self.method_options.items():
            option = record.option(name)
            assert option is not None  # checked by _check_options_apply
            try:
                kept[name] = value if option.validate is None else option.validate(value)
                # Options are part of the schema's fingerprint: JSON data only.
                canonical_json(kept[name])
            except (ValueError, TypeError) as exc:
                reason = exc.message if isinstance(exc, InputError) else str(exc)
                wrong.append(f"'{name}' of {record.name}: {reason} (got {value!r})")
        if not wrong and kept != self.method_options:
            # Frozen model: the validated values replace the written ones once, here.
            self.__dict__["method_options"] = kept
        return wrong

    def option(self, name: str) -> Any:
        """The value of the method option ``name`` for this field: the attribute of a
        built-in option (``fuzzy_scorer``, ...), else the value written, else the
        option's default.

        Raises:
            ConfigurationError: the field's method has no option ``name``.
        """
        if name in BUILTIN_OPTIONS:
            return getattr(self, name)
        if self.method_options and name in self.method_options:
            return self.method_options[name]
        option = registry.get_field_method(self.effective_method).option(name)
        if option is None:
            raise ConfigurationError(f"method {self.effective_method} has no option {name!r}")
        return option.default

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
        """The threshold, defaulting per method (``FieldMethod.default_threshold``)."""
        if self.threshold is not None:
            return self.threshold
        return float(registry.get_field_method(self.effective_method).default_threshold)


def _alternatives(names: tuple[str, ...]) -> str:
    quoted = [f"'{name}'" for name in names]
    return f"{', '.join(quoted[:-1])} or {quoted[-1]}" if len(quoted) > 1 else "".join(quoted)


_SPEC_KEYS = frozenset(FieldSpec.model_fields) - {"method_options"}
"""The keys a field spec is written with (plugin options aside)."""

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
