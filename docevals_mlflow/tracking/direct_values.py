"""MLflow's small value rules, for writing rows without importing mlflow.

Each function gives what the MLflow helper named in its docstring gives for the
values docevals writes (metric values, trace metadata, assessment values, span
attributes, local artifact locations); ``tests/tracking/test_direct_store.py``
compares them with MLflow's own. They exist because importing mlflow costs more
than a small run's whole logging (:mod:`~docevals_mlflow.tracking.direct_store`).
"""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

MAX_SESSION_ID = 250
"""``MAX_CHARS_IN_TRACE_INFO_METADATA``: a longer session id is refused by MLflow."""
MODEL_DIMENSION_MAX_LENGTH = 500
_BIGINT = 2**63
_MAX_FLOAT = 1.7976931348623157e308
TOKEN_COLUMNS = {
    "input_tokens": "input_tokens",
    "output_tokens": "output_tokens",
    "total_tokens": "total_tokens",
    "cache_read_input_tokens": "cache_read_input_tokens",
    "cache_creation_input_tokens": "cache_creation_input_tokens",
    "cache_creation_input_tokens_above_1hr": "cache_creation_input_tokens_above_1hr",
}
COST_COLUMNS = {
    "input_cost": "input_cost",
    "output_cost": "output_cost",
    "total_cost": "total_cost",
}
SESSION_KEY = "mlflow.trace.session"
TOKEN_USAGE_KEY = "mlflow.trace.tokenUsage"
COST_KEY = "mlflow.trace.cost"
PROMOTED_METADATA_KEYS = frozenset({SESSION_KEY, TOKEN_USAGE_KEY, COST_KEY})
"""``PROMOTED_TRACE_METADATA_KEYS``: metadata stored as trace_info columns instead."""


def metric_value(value: float) -> tuple[bool, float]:
    """``SqlAlchemyStore.sanitize_metric_value``: ``(is_nan, stored value)``."""
    if math.isnan(value):
        return True, 0
    if math.isinf(value):
        return False, _MAX_FLOAT if value > 0 else -_MAX_FLOAT
    return False, value


def finite_float_or_none(value: Any) -> float | None:
    """``trace_analytics.finite_float_or_none``."""
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


def token_count_or_none(value: Any) -> int | None:
    """``trace_analytics.token_count_or_none``."""
    if value is None or isinstance(value, bool):
        return None
    try:
        number = Decimal(str(value))
    except (InvalidOperation, TypeError, ValueError):
        return None
    if (
        not number.is_finite()
        or number != number.to_integral_value()
        or not -_BIGINT <= number <= _BIGINT - 1
    ):
        return None
    return int(number)


def _json_object(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return value
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except (TypeError, ValueError):
            return {}
        return value if isinstance(value, dict) else {}
    return {}


def analytics_columns(metadata: dict[str, str]) -> dict[str, Any]:
    """``trace_analytics.analytics_columns_from_metadata``.

    Raises:
        ValueError: a session id longer than MLflow accepts.
    """
    columns: dict[str, Any] = {}
    if SESSION_KEY in metadata:
        session = metadata[SESSION_KEY]
        if session is not None and len(session) > MAX_SESSION_ID:
            raise ValueError("trace session id longer than MLflow accepts")
        columns["session_id"] = session
    if TOKEN_USAGE_KEY in metadata:
        usage = _json_object(metadata[TOKEN_USAGE_KEY])
        columns.update(
            {
                column: token_count_or_none(usage[key])
                for key, column in TOKEN_COLUMNS.items()
                if key in usage
            }
        )
    if COST_KEY in metadata:
        cost = _json_object(metadata[COST_KEY])
        columns.update(
            {
                column: finite_float_or_none(cost[key])
                for key, column in COST_COLUMNS.items()
                if key in cost
            }
        )
    return columns


def assessment_aggregate(value: Any) -> tuple[float | None, bool]:
    """``trace_analytics.assessment_aggregate``: ``(aggregate_value, is_numeric_value)``."""
    if isinstance(value, bool):
        return (1.0 if value else 0.0), False
    if isinstance(value, (int, float)):
        try:
            number = float(value)
        except OverflowError:
            return None, False
        return (number, True) if math.isfinite(number) else (None, False)
    if isinstance(value, str):
        normalized = value.strip().lower()
        if normalized in {"yes", "no"}:
            return (1.0 if normalized == "yes" else 0.0), False
    return None, False


def bounded_model_dimension(value: Any) -> str | None:
    """``trace_analytics.bounded_model_dimension``."""
    return value[:MODEL_DIMENSION_MAX_LENGTH] if isinstance(value, str) else None


# A location these functions handle exactly as MLflow's URI helpers do: an absolute
# file URI or POSIX path, no query, fragment, host or trailing slash, no "." or ".."
# segment and no percent sign (MLflow would decode it).
_SIMPLE_LOCATION = re.compile(r"^(file://)?/[^?#%\\]*[^/?#%\\]$")


def local_artifact_folder(location: str | None) -> Path | None:
    """The local folder of an experiment's artifact location MLflow's
    ``LocalArtifactRepository`` would write to, or ``None`` when the location is not
    one that is simple and local (then MLflow decides)."""
    if not location or not _SIMPLE_LOCATION.match(location):
        return None
    path = location.removeprefix("file://")
    if any(part in {".", ".."} for part in path.split("/")) or "//" in path:
        return None
    return Path(path)


def append_to_location(location: str, *parts: str) -> str:
    """``mlflow.utils.uri.append_to_uri_path`` for a location
    :func:`local_artifact_folder` accepts and plain path segments."""
    return "/".join((location, *parts))


__all__ = [
    "PROMOTED_METADATA_KEYS",
    "analytics_columns",
    "append_to_location",
    "assessment_aggregate",
    "bounded_model_dimension",
    "finite_float_or_none",
    "local_artifact_folder",
    "metric_value",
    "token_count_or_none",
]
