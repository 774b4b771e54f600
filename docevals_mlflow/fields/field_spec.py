"""How one field is compared: :class:`FieldSpec`, and the method names, default
thresholds and list pairings it is written with. Document schemas are in
:mod:`~docevals_mlflow.fields.schema`."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)
from pydantic_core import PydanticCustomError

from docevals_mlflow.core.fingerprints import canonical_json
from docevals_mlflow.core.model import FrozenModel, Number
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
    "ANLS_STAR",
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
