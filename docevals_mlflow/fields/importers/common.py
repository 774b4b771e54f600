"""Helpers and constants shared by the schema importers: error locations, number and
text checks, scalar field specs and IDP evaluation method names.

Which names a format accepts for a method, and what its threshold means, come from the
method records (:mod:`docevals_mlflow.fields.registry`), plugins' included; only the
order in which messages list the names is kept here, as each format documents them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeGuard

from docevals_mlflow.core.values import as_number
from docevals_mlflow.errors import InputError
from docevals_mlflow.fields import registry
from docevals_mlflow.fields.schema import (
    DateOrder,
    FieldSpec,
    FuzzyScorer,
)

_AnyMethod = str
"""A scalar method's name, or ``HUNGARIAN`` (the list method)."""

IDP_LISTING_ORDER: tuple[str, ...] = (
    "EXACT",
    "NUMERIC_EXACT",
    "FUZZY",
    "HUNGARIAN",
    "SEMANTIC",
    "LLM",
    "LEVENSHTEIN",
    "DATE",
    "NORMALIZED",
    "ANLS_STAR",  # not an IDP method: accepted there as every registered method is
)
"""The order in which the IDP accelerator lists its evaluation methods, kept for the
lists of valid names in messages (plugin methods follow, by name)."""


def listed(names: list[str], order: tuple[str, ...]) -> list[str]:
    """``names`` in ``order`` (as a format documents them), the others after."""
    rank = {name: index for index, name in enumerate(order)}
    return sorted(names, key=lambda name: (rank.get(name, len(rank)), names.index(name)))


def threshold_is_tolerance(method: str | None) -> bool:
    """Whether ``method``'s threshold is a tolerance (``NUMERIC_EXACT``'s absolute
    tolerance) rather than a score in [0, 1]."""
    record = registry.find_field_method(method) if method is not None else None
    return record is not None and record.threshold_kind == "tolerance"


# An imported list without a configured threshold gets the IDP accelerator's own
# default for arrays of objects, recorded explicitly: pairs are made as Stickler 1.0
# makes them (min(m, n), weak pairs FD), so 0.8 means here what it means there. The
# native default (DEFAULT_MATCH_THRESHOLD, 0.5) applies to native schemas only.
IDP_DEFAULT_MATCH_THRESHOLD = 0.8


@dataclass(frozen=True)
class _Where:
    """The class an error belongs to, and what its fields are called in the source."""

    class_name: str | None
    noun: Literal["attribute", "property"]

    def error(self, path: str | None, message: str, *, expected: str | None = None) -> InputError:
        """An :class:`InputError` whose message names the class, the field path and ``message``."""
        parts = []
        if self.class_name is not None:
            parts.append(f"class {self.class_name!r}")
        if path:
            parts.append(f"{self.noun} {path!r}" if self.class_name is not None else path)
        prefix = ", ".join(parts)
        return InputError(
            f"{prefix}: {message}" if prefix else message,
            record=self.class_name,
            path=path,
            expected=expected,
        )


def _range_text(low: float, high: float | None, *, above: bool) -> str:
    if high is not None:
        return f"a number from {low:g} to {high:g}"
    return f"a number above {low:g}" if above else f"a number of at least {low:g}"


def _number(
    value: Any,
    where: _Where,
    path: str | None,
    key: str,
    *,
    high: float | None = 1.0,
    above_zero: bool = False,
) -> float:
    """``value`` as a float in ``[0, high]`` (``(0, ...)`` with ``above_zero``), or an error."""
    expected = _range_text(0.0, high, above=above_zero)
    number = as_number(value)
    if number is None:
        raise where.error(path, f"{key} {value!r} is not a number", expected=expected)
    if number < 0 or (above_zero and number == 0) or (high is not None and number > high):
        raise where.error(path, f"{key} {value!r} is out of range", expected=expected)
    return number


def _text(value: Any) -> str | None:
    # Descriptions only inform readers of the schema; a non-text one is not worth failing on.
    return value if isinstance(value, str) and value else None


def _is_list(value: Any) -> TypeGuard[list[Any] | tuple[Any, ...]]:
    return isinstance(value, (list, tuple))


def _schema_id(data: Mapping[str, Any], keys: tuple[str, ...], default: str) -> str:
    for key in keys:
        value = data.get(key)
        if value is None:
            continue
        if not isinstance(value, str) or not value.strip():
            raise InputError(f"{key} {value!r} must be non-empty text", path=key)
        return value
    return default


def _scalar_spec(
    method: str | None,
    threshold: float | None,
    where: _Where,
    path: str,
    key: str,
    *,
    description: str | None = None,
    weight: float | None = None,
    relative_tolerance: float | None = None,
    fuzzy_scorer: FuzzyScorer | None = None,
    date_order: DateOrder | None = None,
    case_sensitive: bool | None = None,
    options: Mapping[str, Any] | None = None,
) -> FieldSpec:
    # Checked here (not only by FieldSpec) so the error names the class, path and key.
    if threshold is not None and not threshold_is_tolerance(method) and threshold > 1:
        raise where.error(
            path,
            f"{key} {threshold:g} is out of range for {method or 'the default method'}",
            expected=_range_text(0.0, 1.0, above=False),
        )
    settings: dict[str, Any] = {
        "method": method,
        "threshold": threshold,
        "description": description,
        "weight": weight,
        "relative_tolerance": relative_tolerance,
        "fuzzy_scorer": fuzzy_scorer,
        "date_order": date_order,
        "case_sensitive": case_sensitive,
    }
    # Unset options are left out so the model's own defaults apply; a plugin method's
    # own options are written next to the others, as in a native schema.
    settings.update(options or {})
    return FieldSpec(**{name: value for name, value in settings.items() if value is not None})


def _method_name(value: Any, where: _Where, path: str, key: str) -> _AnyMethod | None:
    """An IDP evaluation method name (any case), or ``None`` when not set."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    name = value.strip().upper() if isinstance(value, str) else None
    # The IDP's method names are the native ones (plugins' included), and HUNGARIAN.
    if name == "HUNGARIAN" or (name is not None and registry.find_field_method(name)):
        return name
    names = listed(["HUNGARIAN", *registry.field_method_names()], IDP_LISTING_ORDER)
    raise where.error(path, f"unknown {key} {value!r}; valid methods: {', '.join(names)}")
