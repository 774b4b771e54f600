"""The ``x-aws-idp-evaluation-*`` / ``x-aws-stickler-*`` key rules of the JSON Schema importer.

* ``x-aws-idp-evaluation-*`` take precedence over ``x-aws-stickler-*`` key by key,
  because the IDP keys are what the IDP accelerator writes on purpose, while Stickler
  keys are often left behind by Stickler's own exporter.
* A property without a method keeps ``method=None``, so the schema records that it was
  not configured (the comparison then uses ``EXACT``).
* ``x-aws-stickler-threshold`` is a score threshold; for ``NUMERIC_EXACT`` the native
  threshold is an absolute tolerance, so it comes from ``x-aws-idp-evaluation-threshold``,
  ``x-aws-stickler-tolerance`` or the comparator config (``tolerance``,
  ``absolute_tolerance``), never from the Stickler score threshold.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from docevals_mlflow.fields import registry
from docevals_mlflow.fields.importers.common import (
    _AnyMethod,
    _method_name,
    _number,
    listed,
    threshold_is_tolerance,
)
from docevals_mlflow.fields.importers.json_refs import _JsonContext
from docevals_mlflow.fields.registry import FieldMethod, names_text
from docevals_mlflow.fields.schema import DateOrder, FuzzyScorer

STICKLER_LISTING_ORDER: tuple[str, ...] = (
    "EXACT",
    "NUMERIC_EXACT",
    "FUZZY",
    "LEVENSHTEIN",
    "SEMANTIC",
    "LLM",
    "DATE",
    "NORMALIZED",
    "ANLS_STAR",
)
"""The order in which Stickler lists its comparators, for messages (the names
themselves are ``FieldMethod.stickler_names``; plugin methods follow)."""


def _stickler_lookup(methods: tuple[FieldMethod, ...]) -> dict[str, str]:
    # Every spelling is matched without regard to case: "exactcomparator" is no less
    # clear than "ExactComparator".
    return {name.casefold(): method.name for method in methods for name in method.stickler_names}


_BUILTIN_STICKLER_LOOKUP = _stickler_lookup(registry.BUILTIN_METHODS)
_FUZZY_SCORERS: dict[str, FuzzyScorer] = {
    "ratio": "ratio",
    "partial_ratio": "partial_ratio",
    "token_sort_ratio": "token_sort_ratio",
    "token_set_ratio": "token_set_ratio",
}

_IDP_METHOD = "x-aws-idp-evaluation-method"
_IDP_THRESHOLD = "x-aws-idp-evaluation-threshold"
_IDP_MATCH_THRESHOLD = "x-aws-idp-evaluation-match-threshold"
_IDP_WEIGHT = "x-aws-idp-evaluation-weight"
_STICKLER_COMPARATOR = "x-aws-stickler-comparator"
_STICKLER_THRESHOLD = "x-aws-stickler-threshold"
_STICKLER_MATCH_THRESHOLD = "x-aws-stickler-match-threshold"
_STICKLER_WEIGHT = "x-aws-stickler-weight"
_STICKLER_CONFIG = "x-aws-stickler-comparator-config"
_CONFIG_KEYS: dict[str, str | None] = {
    "tolerance": None,
    "absolute_tolerance": None,
    "relative_tolerance": "relative_tolerance",
    "method": "fuzzy_scorer",
    "dayfirst": "date_order",
    "case_sensitive": "case_sensitive",
}
"""Stickler comparator settings the importer reads, and the option each sets (``None``:
the threshold of a method whose threshold is a tolerance). Which methods accept each
follows from the methods' records. A plugin method's own options are read from the
config under their own names."""


def _config_applies(key: str, record: FieldMethod | None) -> bool:
    option = _CONFIG_KEYS[key]
    if record is None:
        return False
    return record.threshold_kind == "tolerance" if option is None else record.reads(option)


def _config_readers(key: str) -> str:
    return names_text(
        [method.name for method in registry.field_methods() if _config_applies(key, method)]
    )


_STICKLER_TOLERANCE = "x-aws-stickler-tolerance"


@dataclass(frozen=True)
class _ScalarRule:
    """A scalar comparison read from one schema node; unset parts are ``None``."""

    method: str | None = None
    threshold: float | None = None
    threshold_key: str = _IDP_THRESHOLD
    relative_tolerance: float | None = None
    fuzzy_scorer: FuzzyScorer | None = None
    date_order: DateOrder | None = None
    case_sensitive: bool | None = None
    options: tuple[tuple[str, Any], ...] | None = None
    """A plugin method's own options, as the comparator config gives them."""

    def under(self, outer: _ScalarRule) -> _ScalarRule:
        """This rule, falling back to ``outer`` (an array's rule) for its items.

        An item schema that names its own method keeps its whole rule: mixing the
        array's threshold into a different method would pair numbers that mean
        different things.
        """
        if self.method is not None:
            return self
        merged = {
            item.name: getattr(self, item.name)
            if getattr(self, item.name) is not None
            else getattr(outer, item.name)
            for item in dataclasses.fields(self)
        }
        merged["threshold_key"] = (
            self.threshold_key if self.threshold is not None else outer.threshold_key
        )
        return _ScalarRule(**merged)


def _json_method(
    node: Mapping[str, Any], context: _JsonContext, path: str
) -> tuple[_AnyMethod | None, str | None]:
    """The configured method and the key it came from (IDP first, then Stickler)."""
    method = _method_name(node.get(_IDP_METHOD), context.where, path, _IDP_METHOD)
    if method is not None:
        return method, _IDP_METHOD
    value = node.get(_STICKLER_COMPARATOR)
    if value is None:
        return None, None
    name = value.strip().casefold() if isinstance(value, str) else None
    # Built-in names first: plugins are loaded only for a name that is not one.
    stickler = _BUILTIN_STICKLER_LOOKUP.get(name or "")
    if stickler is None and name is not None:
        stickler = _stickler_lookup(registry.field_methods()).get(name)
    if stickler is None:
        methods = {method.name: method for method in registry.field_methods()}
        named = [methods[name] for name in listed(list(methods), STICKLER_LISTING_ORDER)]
        main = [method.stickler_names[0] for method in named if method.stickler_names]
        other = [alias for method in named for alias in method.stickler_names[1:]]
        raise context.where.error(
            path,
            f"unknown {_STICKLER_COMPARATOR} {value!r}; valid comparators: "
            f"{', '.join(main)} (or {', '.join(other)})",
        )
    return stickler, _STICKLER_COMPARATOR


def _optional_number(
    node: Mapping[str, Any],
    key: str,
    context: _JsonContext,
    path: str,
    *,
    high: float | None = 1.0,
    above_zero: bool = False,
) -> float | None:
    value = node.get(key)
    if value is None:
        return None
    return _number(value, context.where, path, key, high=high, above_zero=above_zero)


def _json_rule(
    node: Mapping[str, Any],
    method: _AnyMethod | None,
    context: _JsonContext,
    path: str,
) -> _ScalarRule:
    """The scalar rule ``node`` configures for ``method`` (a HUNGARIAN node has none)."""
    if method == "HUNGARIAN":
        return _ScalarRule()
    record = registry.find_field_method(method) if method is not None else None
    config = _comparator_config(node, method, record, context, path)
    threshold, threshold_key = _json_threshold(node, config, method, context, path)
    relative_tolerance: float | None = None
    fuzzy_scorer: FuzzyScorer | None = None
    date_order: DateOrder | None = None
    case_sensitive: bool | None = None
    # Past the check above, a setting present is one the method reads.
    if config.get("relative_tolerance") is not None:
        relative_tolerance = _number(
            config["relative_tolerance"],
            context.where,
            path,
            f"{_STICKLER_CONFIG}.relative_tolerance",
            high=None,
        )
    if config.get("method") is not None:
        fuzzy_scorer = _FUZZY_SCORERS.get(str(config["method"]))
        if fuzzy_scorer is None:
            raise context.where.error(
                path,
                f"unknown {_STICKLER_CONFIG}.method {config['method']!r}; "
                f"valid scorers: {', '.join(_FUZZY_SCORERS)}",
            )
    if config.get("dayfirst") is not None:
        day_first = _config_flag(config, "dayfirst", context, path)
        date_order = "day_first" if day_first else "month_first"
    if config.get("case_sensitive") is not None:
        case_sensitive = _config_flag(config, "case_sensitive", context, path)
    own = [
        (option.name, config[option.name])
        for option in (record.options if record is not None else ())
        if option.name not in registry.BUILTIN_OPTIONS and option.name in config
    ]
    return _ScalarRule(
        method=method,
        threshold=threshold,
        threshold_key=threshold_key,
        relative_tolerance=relative_tolerance,
        fuzzy_scorer=fuzzy_scorer,
        date_order=date_order,
        case_sensitive=case_sensitive,
        options=tuple(own) or None,
    )


def _comparator_config(
    node: Mapping[str, Any],
    method: _AnyMethod | None,
    record: FieldMethod | None,
    context: _JsonContext,
    path: str,
) -> Mapping[str, Any]:
    """The node's comparator config (``{}`` when absent), refused when it holds a
    setting ``method`` does not read."""
    config = node.get(_STICKLER_CONFIG)
    if config is None:
        config = {}
    if not isinstance(config, Mapping):
        raise context.where.error(path, f"{_STICKLER_CONFIG} must be an object")
    misplaced = [
        f"{_STICKLER_CONFIG}.{key} applies to {_config_readers(key)} only"
        for key in _CONFIG_KEYS
        if key in config and not _config_applies(key, record)
    ]
    if misplaced:
        # A setting meant for another method would be dropped silently.
        raise context.where.error(path, f"{'; '.join(misplaced)} (this field: {method})")
    return config


def _json_threshold(
    node: Mapping[str, Any],
    config: Mapping[str, Any],
    method: _AnyMethod | None,
    context: _JsonContext,
    path: str,
) -> tuple[float | None, str]:
    """The node's threshold (``None`` when it sets none) and the key it was given as."""
    if threshold_is_tolerance(method):
        # A tolerance, never Stickler's score threshold (see the module docstring).
        for key, source in (
            (_IDP_THRESHOLD, node),
            (_STICKLER_TOLERANCE, node),
            ("tolerance", config),
            ("absolute_tolerance", config),
        ):
            if source.get(key) is not None:
                label = key if source is node else f"{_STICKLER_CONFIG}.{key}"
                return _number(source[key], context.where, path, label, high=None), label
    else:
        for key in (_IDP_THRESHOLD, _STICKLER_THRESHOLD):
            if node.get(key) is not None:
                return _number(node[key], context.where, path, key), key
    return None, _IDP_THRESHOLD


def _config_flag(config: Mapping[str, Any], key: str, context: _JsonContext, path: str) -> bool:
    value = config[key]
    if not isinstance(value, bool):
        raise context.where.error(path, f"{_STICKLER_CONFIG}.{key} {value!r} must be true or false")
    return value


def _json_weight(node: Mapping[str, Any], context: _JsonContext, path: str) -> float | None:
    for key in (_IDP_WEIGHT, _STICKLER_WEIGHT):
        weight = _optional_number(node, key, context, path, high=None, above_zero=True)
        if weight is not None:
            return weight
    return None
