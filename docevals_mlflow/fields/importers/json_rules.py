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

from docevals_mlflow.fields.importers.common import _AnyMethod, _method_name, _number
from docevals_mlflow.fields.importers.json_refs import _JsonContext
from docevals_mlflow.fields.schema import DateOrder, FuzzyScorer, Method

_STICKLER_COMPARATORS: dict[str, Method] = {
    "ExactComparator": "EXACT",
    "NumericComparator": "NUMERIC_EXACT",
    "FuzzyComparator": "FUZZY",
    "LevenshteinComparator": "LEVENSHTEIN",
    "SemanticComparator": "SEMANTIC",
    "LLMComparator": "LLM",
    "DateComparator": "DATE",
    "NormalizedComparator": "NORMALIZED",
}
_STICKLER_SHORT_NAMES: dict[str, Method] = {
    "exact": "EXACT",
    "numeric": "NUMERIC_EXACT",
    "fuzzy": "FUZZY",
    "levenshtein": "LEVENSHTEIN",
    "semantic": "SEMANTIC",
    "llm": "LLM",
    "date": "DATE",
    "normalized": "NORMALIZED",
}
# Both spellings are matched without regard to case: "exactcomparator" is no less clear.
_STICKLER_LOOKUP: dict[str, Method] = {
    **{name.casefold(): method for name, method in _STICKLER_COMPARATORS.items()},
    **_STICKLER_SHORT_NAMES,
}
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
_CONFIG_KEYS: dict[str, tuple[str, ...]] = {
    "tolerance": ("NUMERIC_EXACT",),
    "absolute_tolerance": ("NUMERIC_EXACT",),
    "relative_tolerance": ("NUMERIC_EXACT",),
    "method": ("FUZZY",),
    "dayfirst": ("DATE",),
    "case_sensitive": ("EXACT", "NORMALIZED"),
}
"""Comparator settings the importer reads, and the methods that read each."""
_STICKLER_TOLERANCE = "x-aws-stickler-tolerance"


@dataclass(frozen=True)
class _ScalarRule:
    """A scalar comparison read from one schema node; unset parts are ``None``."""

    method: Method | None = None
    threshold: float | None = None
    threshold_key: str = _IDP_THRESHOLD
    relative_tolerance: float | None = None
    fuzzy_scorer: FuzzyScorer | None = None
    date_order: DateOrder | None = None
    case_sensitive: bool | None = None

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
    stickler = _STICKLER_LOOKUP.get(value.strip().casefold()) if isinstance(value, str) else None
    if stickler is None:
        raise context.where.error(
            path,
            f"unknown {_STICKLER_COMPARATOR} {value!r}; valid comparators: "
            f"{', '.join(_STICKLER_COMPARATORS)} (or {', '.join(_STICKLER_SHORT_NAMES)})",
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
    config = node.get(_STICKLER_CONFIG)
    if config is None:
        config = {}
    if not isinstance(config, Mapping):
        raise context.where.error(path, f"{_STICKLER_CONFIG} must be an object")

    misplaced = [
        f"{_STICKLER_CONFIG}.{key} applies to {' and '.join(methods)} only"
        for key, methods in _CONFIG_KEYS.items()
        if key in config and method not in methods
    ]
    if misplaced:
        # A setting meant for another method would be dropped silently.
        raise context.where.error(path, f"{'; '.join(misplaced)} (this field: {method})")

    threshold: float | None = None
    threshold_key = _IDP_THRESHOLD
    relative_tolerance: float | None = None
    fuzzy_scorer: FuzzyScorer | None = None
    date_order: DateOrder | None = None
    case_sensitive: bool | None = None
    if method == "NUMERIC_EXACT":
        # A tolerance, never Stickler's score threshold (see the module docstring).
        for key, source in (
            (_IDP_THRESHOLD, node),
            (_STICKLER_TOLERANCE, node),
            ("tolerance", config),
            ("absolute_tolerance", config),
        ):
            if source.get(key) is not None:
                label = key if source is node else f"{_STICKLER_CONFIG}.{key}"
                threshold = _number(source[key], context.where, path, label, high=None)
                threshold_key = label
                break
        if config.get("relative_tolerance") is not None:
            relative_tolerance = _number(
                config["relative_tolerance"],
                context.where,
                path,
                f"{_STICKLER_CONFIG}.relative_tolerance",
                high=None,
            )
    else:
        for key in (_IDP_THRESHOLD, _STICKLER_THRESHOLD):
            if node.get(key) is not None:
                threshold = _number(node[key], context.where, path, key)
                threshold_key = key
                break
        if method == "FUZZY" and config.get("method") is not None:
            fuzzy_scorer = _FUZZY_SCORERS.get(str(config["method"]))
            if fuzzy_scorer is None:
                raise context.where.error(
                    path,
                    f"unknown {_STICKLER_CONFIG}.method {config['method']!r}; "
                    f"valid scorers: {', '.join(_FUZZY_SCORERS)}",
                )
        if method == "DATE" and config.get("dayfirst") is not None:
            day_first = _config_flag(config, "dayfirst", context, path)
            date_order = "day_first" if day_first else "month_first"
        if method in ("EXACT", "NORMALIZED") and config.get("case_sensitive") is not None:
            case_sensitive = _config_flag(config, "case_sensitive", context, path)
    return _ScalarRule(
        method=method,
        threshold=threshold,
        threshold_key=threshold_key,
        relative_tolerance=relative_tolerance,
        fuzzy_scorer=fuzzy_scorer,
        date_order=date_order,
        case_sensitive=case_sensitive,
    )


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
